// What the conversation pane shows for a branch, as plain items, following pi-tui's chat rules
// (pi_tui/tui/transcript.py): a tool call and its result are one card; a custom message with
// display false shows nothing; a reply a TTSR rule cut is a normal stop and its injection a
// rule notice; labels, model and thinking changes show where they happened. Items are built
// per branch position and only when that position is drawn, so a long branch costs nothing
// until it is scrolled to.

const INJECTION = "ttsr-injection";
const LOOK = 64; // how far a tool result and its call may be apart in a branch
const RULE_BLOCK = /<system-(interrupt|reminder)\b[^>]*\brule="([^"]*)"[^>]*>\n?([\s\S]*?)<\/system-\1>/g;

P.EntryStore = class EntryStore {
  constructor(text) {
    this.lines = text ? text.split("\n") : [];
    this.parsed = new Array(this.lines.length);
  }
  get(index) {
    let entry = this.parsed[index];
    if (entry === undefined) {
      try {
        entry = JSON.parse(this.lines[index]);
      } catch (error) {
        entry = { type: "unreadable", id: "" };
      }
      if (!entry || typeof entry !== "object") entry = { type: "unreadable", id: "" };
      this.parsed[index] = entry;
    }
    return entry;
  }
  size(index) {
    return this.lines[index] ? this.lines[index].length : 0;
  }
};

function textOf(content) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b && b.type === "text" && typeof b.text === "string").map((b) => b.text).join("");
}

function imagesOf(content) {
  return Array.isArray(content) ? content.filter((b) => b && b.type === "image") : [];
}

function messageOf(entry) {
  return entry && entry.type === "message" && entry.message && typeof entry.message === "object" ? entry.message : null;
}

// pi 1.x: a system message, or a compaction holding the replayed prompt (its checkpoint).
function carriesSystemState(entry) {
  if (!entry) return false;
  if (entry.type === "compaction") return !!entry.systemMessage && typeof entry.systemMessage === "object";
  const message = messageOf(entry);
  return !!message && message.role === "system";
}

function toolNames(tools) {
  return Array.isArray(tools) ? tools.filter((t) => t && typeof t === "object").map((t) => String(t.name)) : [];
}

function sectionsOf(message) {
  return message.sections && typeof message.sections === "object" && !Array.isArray(message.sections) ? message.sections : {};
}

// The prompt text of a system message (payload.py's system_text): the first one on a branch
// gives its content and every section, a later one its content and each section's change.
P.systemText = function (message, leading) {
  const own = textOf(message.content);
  const parts = own ? [own] : [];
  for (const [name, value] of Object.entries(sectionsOf(message))) {
    if (leading) {
      if (typeof value === "string" && value) parts.push(value);
    } else if (value === null) {
      parts.push('Section "' + name + '" removed.');
    } else {
      parts.push('Section "' + name + '" set to:\n\n' + value);
    }
  }
  return parts.join("\n\n");
};

// What a later system message changes, in one line (payload.py's system_changes).
P.systemChanges = function (message) {
  const parts = [];
  if (textOf(message.content)) parts.push("instructions");
  for (const [name, value] of Object.entries(sectionsOf(message))) parts.push(value === null ? "-" + name : name);
  const tools = toolNames(message.toolsAdded).map((n) => "+" + n).concat(toolNames(message.toolsRemoved).map((n) => "-" + n));
  if (tools.length) parts.push("tools " + tools.join(" "));
  return parts.join(", ");
};

function isInjection(entry) {
  return entry && entry.type === "custom_message" && entry.customType === INJECTION;
}

P.ruleNotes = function (entry) {
  const text = textOf(entry.content);
  const notes = [];
  for (const match of text.matchAll(RULE_BLOCK)) {
    const body = match[3];
    const cut = body.indexOf("\n\n");
    const ruleText = cut >= 0 ? body.slice(cut + 2) : body;
    const name = match[2].replace(/&quot;/g, '"').replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
    notes.push({ name, text: ruleText.split("\n").filter((l) => l.trim()).join("\n") });
  }
  if (notes.length) return notes;
  const details = entry.details && typeof entry.details === "object" ? entry.details : {};
  if (Array.isArray(details.rules) && details.rules.length) return details.rules.map((name) => ({ name: String(name), text: "" }));
  return [{ name: "rule", text: text.trim() }];
};

P.Transcript = class Transcript {
  // ``files``: each turn's changed files by assistant entry id (payload.files_changed).
  constructor(store, files) {
    this.store = store;
    this.files = files && typeof files === "object" ? files : {};
    this.branch = [];
    this.cache = new Map();
  }

  setBranch(indices) {
    this.branch = indices;
    this.cache = new Map();
    this.firstSystem = undefined;
  }

  // Whether the system message at a position starts the prompt on this branch (no earlier
  // entry holds one), as pi's export decides between "System Prompt" and an update.
  // The entry at ``position`` carries a prompt itself, so the scan always ends by it and the
  // first carrier found holds for every later position of the branch.
  isLeadingSystem(position) {
    if (this.firstSystem === undefined) {
      let p = 0;
      while (p < position && !carriesSystemState(this.entryAt(p))) p++;
      this.firstSystem = p;
    }
    return this.firstSystem === position;
  }

  filesOf(entryId) {
    return entryId && Object.prototype.hasOwnProperty.call(this.files, entryId) ? this.files[entryId] : null;
  }

  entryAt(position) {
    return this.store.get(this.branch[position]);
  }

  // The next message-like entry after a position (bookkeeping entries skipped).
  nextMessage(position) {
    for (let p = position + 1; p < this.branch.length && p <= position + 16; p++) {
      const entry = this.entryAt(p);
      if (entry.type === "message" || entry.type === "custom_message") return entry;
    }
    return null;
  }

  isRuleCut(position) {
    const message = messageOf(this.entryAt(position));
    return !!message && message.role === "assistant" && message.stopReason === "aborted" && isInjection(this.nextMessage(position));
  }

  resultFor(position, callId) {
    for (let p = position + 1; p < this.branch.length && p <= position + LOOK; p++) {
      const message = messageOf(this.entryAt(p));
      if (message && message.role === "toolResult" && message.toolCallId === callId) return this.entryAt(p);
    }
    return null;
  }

  // Whether a tool result's call is drawn by an earlier assistant entry (then the result is too).
  callShownBefore(position, callId) {
    for (let p = position - 1; p >= 0 && p >= position - LOOK; p--) {
      const message = messageOf(this.entryAt(p));
      if (message && message.role === "assistant" && Array.isArray(message.content)) {
        if (message.content.some((b) => b && b.type === "toolCall" && b.id === callId)) return !this.isRuleCut(p);
      }
    }
    return false;
  }

  items(position) {
    let items = this.cache.get(position);
    if (items === undefined) {
      items = this.build(position);
      this.cache.set(position, items);
    }
    return items;
  }

  build(position) {
    const entry = this.entryAt(position);
    const base = { entryId: typeof entry.id === "string" ? entry.id : "", timestamp: entry.timestamp };
    const item = (fields) => Object.assign({}, base, fields);
    switch (entry.type) {
      case "message":
        return this.messageItems(position, entry.message, item);
      case "custom_message":
        if (isInjection(entry)) return [item({ kind: "rule", rules: P.ruleNotes(entry) })];
        if (entry.display === false) return [];
        return [item({ kind: "custom", customType: String(entry.customType || ""), text: textOf(entry.content), images: imagesOf(entry.content) })];
      case "compaction":
        return [item({ kind: "summary", summaryKind: "compaction", summary: String(entry.summary || ""), tokensBefore: entry.tokensBefore })];
      case "branch_summary":
        return [item({ kind: "summary", summaryKind: "branch", summary: String(entry.summary || "") })];
      case "model_change":
        return [item({ kind: "info", text: "Model: " + [entry.provider, entry.modelId || entry.model].filter(Boolean).join("/") })];
      case "thinking_level_change":
        return [item({ kind: "info", text: "Thinking level: " + String(entry.thinkingLevel) })];
      case "session_info":
        return [item({ kind: "info", text: entry.name ? "Session name: " + String(entry.name) : "Session name cleared" })];
      default:
        return [];
    }
  }

  messageItems(position, message, item) {
    if (!message || typeof message !== "object") return [];
    switch (message.role) {
      case "user":
        return [item({ kind: "user", text: textOf(message.content), images: imagesOf(message.content) })];
      case "assistant": {
        const blocks = Array.isArray(message.content) ? message.content : [];
        const text = typeof message.content === "string" ? message.content : textOf(blocks);
        const thinking = blocks.filter((b) => b && b.type === "thinking" && typeof b.thinking === "string").map((b) => b.thinking).join("\n");
        const reply = {
          kind: "assistant", text, thinking, stopReason: message.stopReason, error: message.errorMessage || null,
          model: message.model, provider: message.provider, usage: message.usage, ruleCut: false,
        };
        if (this.isRuleCut(position)) return [item(Object.assign(reply, { ruleCut: true, stopReason: "stop", error: null }))];
        const failed = reply.stopReason === "error" || reply.stopReason === "aborted";
        const items = [];
        if (text.trim() || thinking.trim() || failed) items.push(item(reply));
        for (const block of blocks) {
          if (!block || block.type !== "toolCall") continue;
          const result = this.resultFor(position, block.id);
          items.push(item({ kind: "tool", name: String(block.name || "tool"), args: block.arguments && typeof block.arguments === "object" ? block.arguments : {}, result: messageOf(result), resultId: result ? result.id : null }));
        }
        if (!items.length) items.push(item(reply));
        const files = this.filesOf(item({}).entryId);
        if (files) items.push(item({ kind: "files", changes: Array.isArray(files.changes) ? files.changes : [], skipped: Array.isArray(files.skipped) ? files.skipped : [] }));
        return items;
      }
      case "toolResult":
        if (this.callShownBefore(position, message.toolCallId)) return [];
        return [item({ kind: "tool", name: String(message.toolName || "tool"), args: {}, result: message, resultId: null })];
      case "bashExecution":
        return [item({
          kind: "bash", command: String(message.command || ""), output: String(message.output || ""),
          exitCode: message.exitCode, cancelled: !!message.cancelled, truncated: !!message.truncated,
          excluded: !!message.excludeFromContext, fullOutputPath: message.fullOutputPath || null,
        })];
      case "compactionSummary":
        return [item({ kind: "summary", summaryKind: "compaction", summary: String(message.summary || ""), tokensBefore: message.tokensBefore })];
      case "branchSummary":
        return [item({ kind: "summary", summaryKind: "branch", summary: String(message.summary || "") })];
      case "system": {
        // pi 1.x: the prompt and tools in force from here on; never a message the model reads.
        const leading = this.isLeadingSystem(position);
        const described = (tools) => (Array.isArray(tools) ? tools : [])
          .filter((t) => t && typeof t === "object")
          .map((t) => ({ name: String(t.name), description: typeof t.description === "string" ? t.description : "" }));
        const system = {
          kind: "system", leading, changes: leading ? "" : P.systemChanges(message), text: P.systemText(message, leading),
          toolsAdded: described(message.toolsAdded), toolsRemoved: toolNames(message.toolsRemoved),
        };
        if (!system.text && !system.toolsAdded.length && !system.toolsRemoved.length) return [];
        return [item(system)];
      }
      case "custom":
        if (message.customType === INJECTION) return [item({ kind: "rule", rules: P.ruleNotes(message) })];
        if (message.display === false) return [];
        return [item({ kind: "custom", customType: String(message.customType || ""), text: textOf(message.content), images: imagesOf(message.content) })];
      default:
        return [];
    }
  }
};
