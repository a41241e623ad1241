// The header's extras: the system prompt and tools the agent runs with (folded, opened with a
// click or Enter: native <details>), and the session file to download as .jsonl. The prompt and
// the tool texts are session data like any other: text nodes only.

function firstLine(text) {
  const line = String(text || "").split("\n")[0];
  return line.length > 160 ? line.slice(0, 159) + "\u2026" : line;
}

function foldable(parent, className, title, note) {
  const block = parent.appendChild(P.el("details", className));
  const summary = block.appendChild(P.el("summary", null));
  summary.appendChild(P.el("span", "context-title", title));
  if (note) summary.appendChild(P.el("span", "muted", " \u00b7 " + note));
  return block;
}

function typeName(schema) {
  if (!schema || typeof schema !== "object") return "any";
  if (Array.isArray(schema.type)) return schema.type.join(" | ");
  if (typeof schema.type === "string") return schema.type === "array" && schema.items ? typeName(schema.items) + "[]" : schema.type;
  if (Array.isArray(schema.enum)) return schema.enum.map((value) => JSON.stringify(value)).join(" | ");
  const union = schema.anyOf || schema.oneOf;
  if (Array.isArray(union)) return union.map(typeName).join(" | ");
  return "any";
}

function toolRow(list, tool) {
  const params = tool.parameters && typeof tool.parameters === "object" ? tool.parameters : {};
  const properties = params.properties && typeof params.properties === "object" ? params.properties : {};
  const names = Object.keys(properties);
  const required = Array.isArray(params.required) ? params.required : [];
  const description = String(tool.description || "");
  const rest = description.split("\n").slice(1).join("\n").trim();
  if (!names.length && !rest) {
    const row = list.appendChild(P.el("div", "context-tool"));
    row.dataset.tool = tool.name;
    row.appendChild(P.el("span", "context-tool-name", tool.name));
    if (description) row.appendChild(P.el("span", "muted", " \u2014 " + firstLine(description)));
    return;
  }
  const row = list.appendChild(P.el("details", "context-tool"));
  row.dataset.tool = tool.name;
  const summary = row.appendChild(P.el("summary", null));
  summary.appendChild(P.el("span", "context-tool-name", tool.name));
  if (description) summary.appendChild(P.el("span", "muted", " \u2014 " + firstLine(description)));
  if (rest) row.appendChild(P.el("div", "context-tool-text", description));
  if (!names.length) return;
  const table = row.appendChild(P.el("ul", "context-params"));
  for (const name of names) {
    const schema = properties[name] || {};
    const item = table.appendChild(P.el("li", "context-param"));
    item.dataset.param = name;
    item.appendChild(P.el("code", "context-param-name", name));
    item.appendChild(P.el("span", "context-param-type", " " + typeName(schema)));
    item.appendChild(P.el("span", "muted", required.includes(name) ? " required" : " optional"));
    if (schema.description) item.appendChild(P.el("div", "context-param-text", String(schema.description)));
  }
}

// The system prompt and the tool list under the header's facts (nothing when the page has none).
P.renderContext = function (header, context) {
  if (!context) return;
  const section = header.appendChild(P.el("div", "context"));
  const prompt = String(context.systemPrompt || "");
  if (prompt) {
    const lines = prompt.split("\n").length;
    const block = foldable(section, "context-block context-prompt", "System prompt", lines + (lines === 1 ? " line" : " lines"));
    block.id = "system-prompt";
    block.appendChild(P.el("pre", "context-text", prompt));
  }
  const tools = Array.isArray(context.tools) ? context.tools : [];
  if (tools.length) {
    const block = foldable(section, "context-block context-tools", "Tools", tools.map((tool) => tool.name).join(", "));
    block.id = "tool-list";
    const list = block.appendChild(P.el("div", "context-body"));
    for (const tool of tools) toolRow(list, tool);
  }
};

// The session file's bytes, as exported: gzip in base64 at the end of the page, unpacked on demand.
P.sessionJsonl = async function () {
  if (document.readyState === "loading") {
    // The file comes last in the page, after the script: wait until the parser has read it.
    await new Promise((resolve) => document.addEventListener("DOMContentLoaded", resolve, { once: true }));
  }
  const node = document.getElementById("pi-jsonl");
  const binary = atob(node ? node.textContent.replace(/\s+/g, "") : "");
  const packed = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index++) packed[index] = binary.charCodeAt(index);
  const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
};

// Save the session file under its own name (the file pi-tui and pi read back; /import takes it).
P.downloadJsonl = async function (name) {
  const blob = new Blob([await P.sessionJsonl()], { type: "application/x-ndjson" });
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
};
