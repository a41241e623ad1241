// Items to elements. Every block of text from the session is set with textContent (through
// P.el), highlighted code is built from spans of text, images only from checked data: URIs.

const COLLAPSED = 20; // lines of tool output shown until expanded
const EXPANDED_CAP = 5000;

function shortPath(path, cwd) {
  const value = String(path || "");
  if (cwd && value.startsWith(cwd.replace(/\/$/, "") + "/")) return value.slice(cwd.replace(/\/$/, "").length + 1);
  return value;
}

function oneLine(value, limit) {
  const text = (typeof value === "string" ? value : JSON.stringify(value) || "").split(/\s+/).join(" ").trim();
  return text.length <= limit ? text : text.slice(0, limit - 1) + "\u2026";
}

P.toolTitle = function (name, args, cwd) {
  const path = shortPath(args.path !== undefined ? args.path : args.file_path || "", cwd);
  if (name === "read") {
    const offset = Number.isInteger(args.offset) ? args.offset : null;
    const limit = Number.isInteger(args.limit) ? args.limit : null;
    if (offset !== null || limit !== null) {
      const start = offset !== null ? offset : 1;
      return "read " + path + ":" + start + "-" + (limit !== null ? start + limit - 1 : "");
    }
    return "read " + path;
  }
  if (name === "write" || name === "edit" || name === "ls") return name + " " + (path || ".");
  if (name === "bash") return "$ " + oneLine(args.command || "", 200);
  if (name === "grep") return "grep /" + oneLine(args.pattern || "", 80) + "/" + (path ? " in " + path : "");
  if (name === "find") return "find " + oneLine(args.pattern || "", 80) + (path ? " in " + path : "");
  const shown = Object.keys(args).map((key) => key + "=" + oneLine(args[key], 30)).join(", ");
  return (name + " " + shown).trim();
};

// A block of lines, the first COLLAPSED of them (the last with tail) until expanded.
function clippedLines(parent, text, options, ctx) {
  const lines = String(text).replace(/\n+$/, "").split("\n");
  const key = options.key;
  const expanded = ctx.expanded.has(key);
  let shown = lines;
  let hidden = 0;
  if (!expanded && lines.length > COLLAPSED) {
    hidden = lines.length - COLLAPSED;
    shown = options.tail ? lines.slice(-COLLAPSED) : lines.slice(0, COLLAPSED);
  } else if (lines.length > EXPANDED_CAP) {
    hidden = lines.length - EXPANDED_CAP;
    shown = lines.slice(0, EXPANDED_CAP);
  }
  const pre = P.el("pre", "output " + (options.className || ""));
  if (options.diff) {
    for (const line of shown) {
      const cls = line.startsWith("+") ? "diff-add" : line.startsWith("-") ? "diff-del" : "diff-ctx";
      pre.appendChild(P.el("span", cls, line + "\n"));
    }
  } else if (options.language) {
    pre.appendChild(P.highlight(shown.join("\n"), options.language));
  } else {
    pre.textContent = shown.join("\n");
  }
  if (lines.length > COLLAPSED) {
    const toggle = P.el("button", "more", expanded
      ? "Show less"
      : "Show " + hidden + " more line" + (hidden === 1 ? "" : "s"));
    toggle.type = "button";
    toggle.dataset.toggle = key;
    toggle.setAttribute("aria-expanded", expanded ? "true" : "false");
    if (options.tail && !expanded) parent.appendChild(toggle);
    parent.appendChild(pre);
    if (!options.tail || expanded) parent.appendChild(toggle);
  } else {
    parent.appendChild(pre);
  }
}

function images(parent, blocks) {
  for (const block of blocks || []) {
    const src = P.imageSource(block);
    if (src) {
      const img = P.el("img", "image");
      img.alt = "image (" + (block.mimeType || "") + ")";
      img.src = src;
      parent.appendChild(img);
    } else {
      parent.appendChild(P.el("div", "muted", "[image]"));
    }
  }
}

function labelChip(label) {
  return label ? P.el("span", "label-chip", label) : null;
}

function renderUser(item, ctx) {
  const node = P.el("div", "item user");
  node.appendChild(P.el("div", "user-text", item.text));
  images(node, item.images);
  return node;
}

function usageLine(item) {
  const parts = [];
  if (item.model) parts.push(item.provider ? item.provider + "/" + item.model : item.model);
  const usage = item.usage && typeof item.usage === "object" ? item.usage : null;
  if (usage) {
    if (usage.input) parts.push("\u2191" + P.formatCount(usage.input));
    if (usage.output) parts.push("\u2193" + P.formatCount(usage.output));
    if (usage.cacheRead) parts.push("R" + P.formatCount(usage.cacheRead));
    const cost = usage.cost && typeof usage.cost.total === "number" ? usage.cost.total : 0;
    if (cost) parts.push("$" + cost.toFixed(3));
  }
  return parts.length ? P.el("div", "meta", parts.join(" \u00b7 ")) : null;
}

function renderAssistant(item, ctx) {
  const node = P.el("div", "item assistant");
  if (item.thinking && item.thinking.trim()) {
    const details = P.el("details", "thinking");
    details.open = ctx.expanded.has(item.entryId + ":thinking");
    details.dataset.toggleKey = item.entryId + ":thinking";
    details.appendChild(P.el("summary", null, "Thinking"));
    details.appendChild(P.el("div", "thinking-text", item.thinking));
    node.appendChild(details);
  }
  if (item.text && item.text.trim()) node.appendChild(P.renderMarkdown(item.text));
  if (item.ruleCut) node.appendChild(P.el("div", "muted", "(stopped by a rule, then retried)"));
  else if (item.stopReason === "aborted") node.appendChild(P.el("div", "error-line", item.error || "Aborted"));
  else if (item.stopReason === "error") node.appendChild(P.el("div", "error-line", "Error: " + (item.error || "unknown error")));
  else if (!item.text.trim() && !item.thinking.trim()) node.appendChild(P.el("div", "muted", "(no content)"));
  node.appendChild(usageLine(item) || document.createTextNode(""));
  return node;
}

function renderTool(item, ctx, index) {
  const result = item.result;
  const status = !result ? "pending" : result.isError ? "error" : "success";
  const node = P.el("div", "item tool tool-" + status);
  node.dataset.tool = item.name;
  const head = node.appendChild(P.el("div", "tool-title"));
  head.appendChild(P.el("span", null, P.toolTitle(item.name, item.args, ctx.cwd)));
  if (status === "pending") head.appendChild(P.el("span", "muted", "  (no result)"));
  const key = item.entryId + ":" + index;
  const args = item.args;
  const details = result && result.details && typeof result.details === "object" ? result.details : {};
  const output = result ? String(textOf2(result.content)) : "";
  if (item.name === "edit" && status === "success" && typeof details.diff === "string") {
    clippedLines(node, details.diff, { key, diff: true }, ctx);
  } else if (item.name === "edit" && !result && typeof args.oldText === "string") {
    clippedLines(node, "-" + args.oldText.split("\n").join("\n-") + "\n+" + String(args.newText || "").split("\n").join("\n+"), { key, diff: true }, ctx);
  } else if (item.name === "write" && status !== "error" && typeof args.content === "string") {
    clippedLines(node, args.content, { key, language: P.languageOf(args.path || args.file_path) }, ctx);
    if (output) node.appendChild(P.el("div", "muted", output));
  } else if (output) {
    const language = item.name === "read" && status === "success" ? P.languageOf(args.path || args.file_path) : null;
    clippedLines(node, output, { key, tail: item.name === "bash", language, className: status === "error" ? "error-text" : "" }, ctx);
  } else if (!["read", "write", "edit", "bash", "grep", "find", "ls"].includes(item.name) && Object.keys(args).length) {
    clippedLines(node, JSON.stringify(args, null, 2), { key: key + ":args", language: "json" }, ctx);
  }
  if (result) images(node, Array.isArray(result.content) ? result.content.filter((b) => b && b.type === "image") : []);
  return node;
}

function textOf2(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b && b.type === "text" && typeof b.text === "string").map((b) => b.text).join("");
}

function renderBash(item, ctx) {
  const node = P.el("div", "item bash");
  const head = node.appendChild(P.el("div", "bash-command", "$ " + item.command));
  if (item.excluded) head.appendChild(P.el("span", "muted", "  (not sent to the model)"));
  if (item.output) clippedLines(node, item.output, { key: item.entryId + ":bash", tail: true }, ctx);
  if (item.cancelled) node.appendChild(P.el("div", "warning-line", "cancelled"));
  else if (item.exitCode !== 0 && item.exitCode !== undefined && item.exitCode !== null) node.appendChild(P.el("div", "error-line", "exit code " + item.exitCode));
  if (item.truncated && item.fullOutputPath) node.appendChild(P.el("div", "muted", "full output: " + item.fullOutputPath));
  return node;
}

function renderSummary(item, ctx) {
  const node = P.el("div", "item summary summary-" + item.summaryKind);
  let head = item.summaryKind === "compaction" ? "Compacted the conversation" : "Summary of the branch left behind";
  if (item.summaryKind === "compaction" && typeof item.tokensBefore === "number" && item.tokensBefore) {
    head += " (" + item.tokensBefore.toLocaleString("en-US") + " tokens summarised)";
  }
  node.appendChild(P.el("div", "summary-title", head));
  const details = node.appendChild(P.el("details", "summary-body"));
  details.open = ctx.expanded.has(item.entryId + ":summary");
  details.dataset.toggleKey = item.entryId + ":summary";
  details.appendChild(P.el("summary", null, details.open ? "Summary" : "Summary (" + item.summary.split("\n").length + " lines)"));
  details.appendChild(P.renderMarkdown(item.summary));
  return node;
}

function renderCustom(item, ctx) {
  const node = P.el("div", "item custom");
  node.appendChild(P.el("div", "custom-type", "[" + item.customType + "]"));
  node.appendChild(P.renderMarkdown(item.text));
  images(node, item.images);
  return node;
}

function renderRule(item, ctx) {
  const node = P.el("div", "item rule");
  const rules = item.rules;
  node.appendChild(P.el("div", "rule-title", rules.length === 1 ? "\u26a0 Injecting rule: " + rules[0].name : "\u26a0 Injecting " + rules.length + " rules"));
  const body = rules.length === 1 ? rules[0].text : rules.map((rule) => "\u2022 " + rule.name + (rule.text ? "\n" + rule.text.replace(/^/gm, "  ") : "")).join("\n");
  if (body) clippedLines(node, body, { key: item.entryId + ":rule", className: "rule-text" }, ctx);
  return node;
}

// pi 1.x's system message: the prompt and tools from here on (the first on the branch), or what
// a later one changes; the prompt folded like tool output, the tools as a list.
function toolList(node, title, tools) {
  if (!tools.length) return;
  const list = node.appendChild(P.el("div", "system-tools"));
  list.appendChild(P.el("div", "system-tools-title", title));
  for (const tool of tools) {
    const row = list.appendChild(P.el("div", "system-tool"));
    row.appendChild(P.el("span", "system-tool-name", tool.name));
    if (tool.description) row.appendChild(P.el("span", "muted", " \u2014 " + tool.description.split("\n")[0]));
  }
}

function renderSystem(item, ctx) {
  const node = P.el("div", "item system");
  const title = item.leading ? "System prompt" : "System prompt update" + (item.changes ? ": " + item.changes : "");
  node.appendChild(P.el("div", "system-title", title));
  if (item.text) clippedLines(node, item.text, { key: item.entryId + ":system", className: "system-text" }, ctx);
  toolList(node, item.leading ? "Available tools" : "Tools added", item.toolsAdded);
  toolList(node, "Tools removed", item.toolsRemoved.map((name) => ({ name, description: "" })));
  return node;
}

// A turn's changed files (its checkpoint entry): "Files changed: M app.py, R old.py -> new.py".
function renderFiles(item) {
  const node = P.el("div", "item files");
  const parts = item.changes.map((c) => String(c[0]) + " " + (c.length > 2 ? String(c[2]) + " -> " : "") + String(c[1]));
  if (parts.length) node.appendChild(P.el("div", "files-changed", "Files changed: " + parts.join(", ")));
  if (item.skipped.length) node.appendChild(P.el("div", "muted", "Not recorded (too large): " + item.skipped.map(String).join(", ")));
  return node;
}

function renderInfo(item) {
  return P.el("div", "item info", item.text);
}

const RENDERERS = {
  user: renderUser, assistant: renderAssistant, tool: renderTool, bash: renderBash,
  summary: renderSummary, custom: renderCustom, rule: renderRule, info: renderInfo, system: renderSystem,
  files: renderFiles,
};

// One branch position: its items in a frame carrying the entry id, label and copy-link button.
P.renderEntry = function (entryId, items, ctx) {
  const frame = P.el("section", "entry");
  frame.dataset.entryId = entryId;
  if (!items.length) {
    frame.classList.add("empty");
    return frame;
  }
  frame.id = "entry-" + entryId;
  const label = ctx.labelOf(entryId);
  if (items.every((item) => item.kind === "info") && !label) {
    // model and thinking changes: one quiet line, no bar
    frame.classList.add("quiet");
    for (const item of items) {
      const line = frame.appendChild(renderInfo(item));
      if (item.timestamp) line.title = P.formatDate(item.timestamp);
    }
    if (entryId === ctx.targetId) frame.classList.add("target");
    return frame;
  }
  const bar = frame.appendChild(P.el("div", "entry-bar"));
  bar.appendChild(P.el("span", "entry-kind", items[0].kind === "tool" ? "tool" : items[0].kind));
  if (items[0].timestamp) bar.appendChild(P.el("time", "entry-time", P.formatDate(items[0].timestamp)));
  const chip = labelChip(label);
  if (chip) bar.appendChild(chip);
  const link = bar.appendChild(P.el("a", "copy-link", "#"));
  link.href = "#" + encodeURIComponent(entryId);
  link.title = "Copy a link to this entry";
  link.dataset.copyLink = entryId;
  items.forEach((item, index) => {
    const render = RENDERERS[item.kind];
    if (render) frame.appendChild(render(item, ctx, index));
  });
  if (entryId === ctx.targetId) frame.classList.add("target");
  return frame;
};

// A click on a fold/unfold control (data-toggle): flip its key in expanded; true when it was one.
P.toggleFrom = function (event, expanded) {
  const toggle = event.target.closest("[data-toggle]");
  if (!toggle) return false;
  const key = toggle.dataset.toggle;
  if (expanded.has(key)) expanded.delete(key);
  else expanded.add(key);
  return true;
};
