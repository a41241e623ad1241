// The live page of pi-tui serve: the sessions, the chat of the current branch streaming live,
// the /tree panel (five filters, search, labels; click an entry to move there or label it) and
// a prompt box. It talks to the same HTTP API as any client (docs/server.md): every request
// carries the bearer token, and the event stream is read with fetch (EventSource cannot send
// a header), resuming with Last-Event-ID after a drop and asking for a snapshot after a gap.
// Session content goes into the document as text only (P.el / textContent).

const ROW_HEIGHT = 22;
const THEME_KEY = "pi-serve-theme";
const RUNNING = new Set(["generating", "executing_tools", "paused", "waiting_user_input"]);
const RUNTIME_TEXT = {
  idle: "idle", generating: "generating\u2026", executing_tools: "running tools\u2026",
  paused: "waiting for a confirmation", waiting_user_input: "waiting for your input", error: "error",
};

const state = {
  token: "",
  sessions: [],
  current: null,
  info: null,
  drawn: false,
  summary: {},
  tree: null,
  layout: null,
  transcript: null,
  view: null,
  filter: "default",
  search: "",
  selected: -1,
  expanded: new Set(),
  runtime: "idle",
  draft: null,
  tools: new Map(),
  lastSeq: null,
  stream: null,
  events: 0,
  snapshots: 0,
  dialogEntry: null,
};
const themes = new P.ThemeSwitch(JSON.parse(document.getElementById("pi-themes").textContent || "[]"), THEME_KEY);

// ---------------------------------------------------------------- requests

// The token: the page is served with it only when its address carried it as ?token= (the
// address then loses it from the bar and the history); the tab keeps it in sessionStorage,
// which browsers keep per origin, port included, so a reload opens the page again and no
// other server on this host (another port) is ever sent it. No cookie: a cookie of 127.0.0.1
// goes to every port.
const TOKEN_KEY = "pi-serve-token";
function takeToken() {
  const given = JSON.parse(document.getElementById("pi-serve").textContent || "{}").token || "";
  if (new URLSearchParams(location.search).has("token")) {
    history.replaceState(null, "", location.pathname + location.hash);
  }
  try {
    if (given) sessionStorage.setItem(TOKEN_KEY, given);
    return given || sessionStorage.getItem(TOKEN_KEY) || "";
  } catch (error) {
    return given;
  }
}

async function api(path, options) {
  const init = Object.assign({ headers: {} }, options || {});
  init.headers = Object.assign({ Authorization: "Bearer " + state.token }, init.headers);
  if (init.json !== undefined) {
    init.method = init.method || "POST";
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(init.json);
  }
  const response = await fetch(path, init);
  let body = null;
  try { body = await response.json(); } catch (error) { body = null; }
  if (!response.ok) {
    const message = body && (body.error || body.message) ? body.error || body.message : response.status + " " + response.statusText;
    throw new Error(message);
  }
  return body;
}

function command(payload) {
  return api("/sessions/" + encodeURIComponent(state.current) + "/commands", { json: payload });
}

// ---------------------------------------------------------------- toast

let toastTimer = 0;
function toast(text) {
  let node = document.querySelector(".toast");
  if (!node) node = document.body.appendChild(P.el("div", "toast"));
  node.textContent = text;
  node.classList.add("shown");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => node.classList.remove("shown"), 4000);
}

// ---------------------------------------------------------------- sessions

async function loadSessions() {
  const query = document.getElementById("session-search").value;
  const body = await api("/sessions" + (query.trim() ? "?q=" + encodeURIComponent(query) : ""));
  state.sessions = body.sessions;
  renderSessions();
}

function renderSessions() {
  const list = document.getElementById("session-list");
  P.clear(list);
  for (const row of state.sessions) {
    const item = P.el("li", "session-row" + (row.id === state.current ? " current" : ""));
    item.dataset.sessionId = row.id;
    const title = row.name || row.firstMessage || "(no messages yet)";
    const first = item.appendChild(P.el("span", "session-first"));
    if (row.live) first.appendChild(P.el("span", "live-dot", "\u25cf "));
    first.appendChild(document.createTextNode(title));
    item.appendChild(P.el("span", "session-meta", row.cwd + " \u00b7 " + P.formatDate(row.modified)));
    item.title = title;
    list.appendChild(item);
  }
}

async function newSession() {
  const body = await api("/sessions", { json: {} });
  await openSession(body.id);
  await loadSessions();
}

async function openSession(id) {
  if (state.stream) state.stream.abort();
  state.current = id;
  state.lastSeq = null;
  state.draft = null;
  state.tools = new Map();
  state.selected = -1;
  state.expanded = new Set();
  state.drawn = false;
  document.body.dataset.session = id;
  history.replaceState(null, "", location.pathname + "#session=" + encodeURIComponent(id)); // kept on reload
  renderSessions();
  await loadTree();
  follow(id);
  document.getElementById("prompt").focus();
}

// ---------------------------------------------------------------- tree and chat

async function loadTree() {
  const id = state.current;
  if (!id) return;
  const body = await api("/sessions/" + encodeURIComponent(id) + "/tree?entries=path");
  if (id !== state.current) return;
  state.tree = body.tree;
  state.summary = body.summary || {};
  state.layout = new P.TreeLayout(body.tree);
  // tree.files: each turn's changed files (its checkpoint entry), listed under its tool calls
  state.transcript = new P.Transcript(new P.EntryStore(body.entries || ""), body.tree.files);
  const title = document.getElementById("session-title");
  title.textContent = body.summary && body.summary.name ? body.summary.name : "pi-tui";
  refreshTree();
  renderChat();
  document.body.dataset.leaf = body.leafId || "";
}

let reloadTimer = 0;
function scheduleReload() {
  clearTimeout(reloadTimer);
  reloadTimer = setTimeout(() => loadTree().catch((error) => toast(error.message)), 60);
}

const treeNode = document.getElementById("tree");
const treeList = new P.VirtualList(treeNode, {
  fixed: true,
  threshold: 400,
  overscan: 40 * ROW_HEIGHT,
  estimate: () => ROW_HEIGHT,
  render: (row) => P.treeRow(state.layout, state.view, row, state.selected),
});

function refreshTree() {
  if (!state.layout) return;
  const top = treeNode.scrollTop;
  state.view = state.layout.view(state.filter, state.search);
  treeList.reset(state.view.visible.length);
  treeNode.scrollTop = top;
  for (const button of document.querySelectorAll("[data-filter]")) {
    const on = button.dataset.filter === state.filter;
    button.classList.toggle("active", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }
  const counter = document.getElementById("tree-counter");
  counter.textContent = state.view.visible.length ? state.view.visible.length + " entries" : "No entries found";
}

function buildFilters() {
  const box = document.getElementById("tree-filters");
  for (const [filter, title] of Object.entries(P.FILTER_TITLES)) {
    const button = box.appendChild(P.el("button", "filter", title));
    button.type = "button";
    button.dataset.filter = filter;
    button.addEventListener("click", () => {
      state.filter = filter;
      refreshTree();
    });
  }
}

// The chat is a virtual list over the current branch (a 50,000-entry session draws only what
// is on screen), with one more position at the end: the reply being streamed and the tools
// running, a node of its own that is updated in place.
const conversationNode = document.getElementById("conversation");
const draftNode = P.el("div", "draft-slot");
const conversationList = new P.VirtualList(conversationNode, {
  threshold: 300,
  overscan: 1200,
  estimate: estimatePosition,
  render: renderPosition,
});

function branch() {
  return state.tree ? state.tree.path : [];
}

function estimatePosition(position) {
  const path = branch();
  if (position >= path.length) return 40;
  const index = path[position];
  const kind = state.tree.kinds[index];
  if (kind === 1 || kind === 2) return /^\[(model|thinking|title)/.test(state.tree.texts[index]) ? 34 : 0;
  return 56 + Math.min(900, Math.ceil(state.transcript.store.size(index) / 110) * 20);
}

function chatContext() {
  return {
    cwd: state.summary.cwd,
    expanded: state.expanded,
    labelOf: (id) => {
      const index = state.layout.indexOf(id);
      return index >= 0 ? state.layout.label(index) : null;
    },
    targetId: null,
  };
}

function renderPosition(position) {
  const path = branch();
  if (position >= path.length) {
    fillDraft();
    return draftNode;
  }
  return P.renderEntry(state.tree.ids[path[position]], state.transcript.items(position), chatContext());
}

function atBottom(slack) {
  return conversationNode.scrollHeight - conversationNode.scrollTop - conversationNode.clientHeight < slack;
}

function toBottom() {
  for (let round = 0; round < 4; round++) {
    conversationNode.scrollTop = conversationNode.scrollHeight;
    conversationList.update();
  }
}

function renderChat() {
  const follow = atBottom(40) || !state.drawn;
  const top = conversationNode.scrollTop;
  state.transcript.setBranch(branch());
  conversationList.reset(branch().length + 1);
  state.drawn = true;
  if (follow) toBottom();
  else {
    conversationNode.scrollTop = top;
    conversationList.update();
  }
}

function textOf(content, kind) {
  if (typeof content === "string") return kind === "text" ? content : "";
  if (!Array.isArray(content)) return "";
  return content.filter((b) => b && b.type === kind).map((b) => (kind === "thinking" ? b.thinking : b.text) || "").join("");
}

function fillDraft() {
  P.clear(draftNode);
  const message = state.draft;
  if (message) {
    const frame = draftNode.appendChild(P.el("div", "entry draft"));
    frame.appendChild(P.el("div", "draft-mark", "assistant \u00b7 streaming"));
    const item = frame.appendChild(P.el("div", "item assistant"));
    const thinking = textOf(message.content, "thinking");
    if (thinking.trim()) item.appendChild(P.el("div", "thinking thinking-text", thinking));
    const text = textOf(message.content, "text");
    if (text) item.appendChild(P.renderMarkdown(text));
  }
  for (const tool of state.tools.values()) {
    const args = tool.args && typeof tool.args === "object" ? tool.args : {};
    draftNode.appendChild(P.el("div", "running-tool", "\u25b6 " + P.toolTitle(String(tool.toolName || "tool"), args, state.summary.cwd)));
  }
  if (!message && !state.tools.size && !branch().length) {
    draftNode.appendChild(P.el("div", "empty-chat", "No messages yet. Type below to start."));
  }
}

let draftFrame = 0;
function renderDraft() {
  if (draftFrame) return;
  draftFrame = requestAnimationFrame(() => {
    draftFrame = 0;
    const follow = atBottom(60);
    fillDraft();
    conversationList.schedule(); // its height changed: measured again
    if (follow) toBottom();
  });
}

function onChatClick(event) {
  if (P.toggleFrom(event, state.expanded)) conversationList.refresh();
}

// ---------------------------------------------------------------- status and prompt

function setRuntime(runtime) {
  state.runtime = runtime;
  const node = document.getElementById("status");
  node.dataset.runtime = runtime;
  const model = state.info && state.info.model ? state.info.model.provider + "/" + state.info.model.id + " \u00b7 " : "";
  const readOnly = state.info && state.info.readOnly ? "read-only \u00b7 " : "";
  node.textContent = readOnly + model + (RUNTIME_TEXT[runtime] || runtime);
  const running = RUNNING.has(runtime);
  document.getElementById("send").textContent = running ? "Steer" : "Send";
  document.getElementById("abort").disabled = !running;
  document.getElementById("follow-up").disabled = !running;
}

async function send(kind) {
  const box = document.getElementById("prompt");
  const text = box.value;
  if (!text.trim() || !state.current) return;
  const type = kind || (RUNNING.has(state.runtime) ? "steer" : "prompt");
  try {
    await command({ type, message: text });
    box.value = "";
  } catch (error) {
    toast(error.message);
  }
}

async function abortRun() {
  try { await command({ type: "abort" }); } catch (error) { toast(error.message); }
}

function onPromptKey(event) {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send(null);
  } else if (event.key === "Escape" && RUNNING.has(state.runtime)) {
    event.preventDefault();
    abortRun();
  }
}

// ---------------------------------------------------------------- moving in the tree, labels

function onTreeClick(event) {
  const row = event.target.closest(".row");
  if (!row) return;
  const index = state.layout.indexOf(row.dataset.entryId);
  state.selected = index;
  treeList.refresh();
  openEntryDialog(row.dataset.entryId);
}

function openEntryDialog(entryId) {
  const index = state.layout.indexOf(entryId);
  state.dialogEntry = entryId;
  document.getElementById("entry-text").textContent = state.tree.texts[index];
  document.getElementById("label-input").value = state.layout.label(index) || "";
  document.getElementById("custom-focus").value = "";
  document.getElementById("entry-dialog").showModal();
}

async function moveTo(choice) {
  const dialog = document.getElementById("entry-dialog");
  const payload = { type: "navigate_tree", targetId: state.dialogEntry, summarize: choice !== "none" };
  if (choice === "custom") {
    const focus = document.getElementById("custom-focus");
    if (!focus.value.trim()) {
      focus.focus();
      return;
    }
    payload.customInstructions = focus.value;
  }
  dialog.close();
  if (payload.summarize) toast("Summarizing the branch\u2026");
  try {
    const answer = await command(payload);
    const data = answer.data || {};
    if (data.cancelled) toast("The move was cancelled");
    else toast(payload.summarize ? "Moved, with a summary of the branch left" : "Moved");
    if (data.editorText) document.getElementById("prompt").value = data.editorText;
    await loadTree();
  } catch (error) {
    toast(error.message);
  }
}

async function saveLabel() {
  const dialog = document.getElementById("entry-dialog");
  const label = document.getElementById("label-input").value;
  dialog.close();
  try {
    await command({ type: "set_label", entryId: state.dialogEntry, label: label.trim() || null });
    await loadTree();
  } catch (error) {
    toast(error.message);
  }
}

// ---------------------------------------------------------------- the event stream

async function follow(id) {
  const controller = new AbortController();
  state.stream = controller;
  while (!controller.signal.aborted && state.current === id) {
    try {
      const headers = { Authorization: "Bearer " + state.token };
      if (state.lastSeq !== null) headers["Last-Event-ID"] = String(state.lastSeq);
      const response = await fetch("/sessions/" + encodeURIComponent(id) + "/events", { headers, signal: controller.signal });
      if (!response.ok) throw new Error("events: " + response.status);
      const reader = response.body.getReader();
      const decoder = new TextDecoder();
      let buffer = "";
      let gap = false;
      while (!gap) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += decoder.decode(value, { stream: true });
        let cut;
        while (!gap && (cut = buffer.indexOf("\n\n")) >= 0) {
          const frame = buffer.slice(0, cut);
          buffer = buffer.slice(cut + 2);
          gap = !onFrame(frame);
        }
      }
      if (gap) {
        state.lastSeq = null; // a number went missing: start again from a snapshot
        reader.cancel().catch(() => {});
      }
    } catch (error) {
      if (controller.signal.aborted) return;
    }
    if (!controller.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

// One SSE frame; false when its number shows a gap.
function onFrame(frame) {
  let id = null;
  let name = "message";
  let data = "";
  for (const line of frame.split("\n")) {
    if (!line || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = Number(value);
    else if (field === "event") name = value;
    else if (field === "data") data += (data ? "\n" : "") + value;
  }
  if (!data) return true;
  if (id !== null && name !== "snapshot" && state.lastSeq !== null && id !== state.lastSeq + 1) return false;
  if (id !== null) state.lastSeq = id;
  state.events += 1;
  let event;
  try { event = JSON.parse(data); } catch (error) { return true; }
  onEvent(name, event);
  return true;
}

// The streamed message, rebuilt from message_update deltas (pi 1.x's wire carries no partial
// message): deltas are appended to their block by contentIndex, a block's *_end replaces it
// with its final content, message_end replaces the whole message.
function startDraft(message) {
  const draft = Object.assign({}, message);
  draft.content = Array.isArray(message.content) ? message.content.map((block) => Object.assign({}, block)) : [];
  draft.toolJson = {};
  return draft;
}

function applyDelta(draft, event) {
  if (event.usage) draft.usage = event.usage;
  const delta = event.assistantMessageEvent;
  if (!delta || typeof delta.contentIndex !== "number") return false;
  const index = delta.contentIndex;
  const blocks = draft.content;
  while (blocks.length <= index) blocks.push({ type: "text", text: "" });
  switch (delta.type) {
    case "text_start": blocks[index] = { type: "text", text: "" }; break;
    case "thinking_start": blocks[index] = { type: "thinking", thinking: "" }; break;
    case "toolcall_start":
      blocks[index] = { type: "toolCall", id: delta.id, name: delta.toolName, arguments: {} };
      draft.toolJson[index] = "";
      break;
    case "text_delta": blocks[index].text = (blocks[index].text || "") + (delta.delta || ""); break;
    case "thinking_delta": blocks[index].thinking = (blocks[index].thinking || "") + (delta.delta || ""); break;
    case "toolcall_delta":  // the arguments' JSON so far; toolcall_end brings them parsed
      draft.toolJson[index] = (draft.toolJson[index] || "") + (delta.delta || "");
      break;
    case "text_end": blocks[index] = { type: "text", text: delta.content || "" }; break;
    case "thinking_end": blocks[index] = { type: "thinking", thinking: delta.content || "" }; break;
    case "toolcall_end": if (delta.toolCall) blocks[index] = delta.toolCall; break;
    default: return false;
  }
  return true;
}

function onEvent(name, event) {
  switch (name) {
    case "snapshot":
      state.snapshots += 1;
      state.info = event.session;
      state.draft = event.draft && event.draft.message ? startDraft(event.draft.message) : null;
      state.tools = new Map((event.draft ? event.draft.tools : []).map((tool) => [tool.toolCallId, tool]));
      setRuntime(event.runtime);
      if (event.session && event.session.notice) toast(event.session.notice);
      scheduleReload();
      break;
    case "runtime_update":
      setRuntime(event.runtime);
      if (event.runtime === "error" && event.error) toast(event.error);
      break;
    case "message_start":
      if (event.message && event.message.role === "assistant") {
        state.draft = startDraft(event.message);
        renderDraft();
      } else {
        scheduleReload();
      }
      break;
    case "message_update":
      if (state.draft && applyDelta(state.draft, event)) renderDraft();
      break;
    case "message_end":
      if (event.message && event.message.role === "assistant") state.draft = null;
      scheduleReload();
      break;
    case "tool_execution_start":
      state.tools.set(event.toolCallId, event);
      renderDraft();
      break;
    case "tool_execution_end":
      state.tools.delete(event.toolCallId);
      renderDraft();
      break;
    case "agent_end":
      state.draft = null;
      state.tools.clear();
      scheduleReload();
      loadSessions().catch(() => {});
      break;
    case "session_update":
    case "compaction_end":
      scheduleReload();
      break;
    case "notice":
      toast(event.message);
      break;
    case "extension_ui_request":
      answerExtension(event);
      break;
    default:
      break;
  }
}

// An extension asks the user something: the browser's own dialogs, answered as rpc clients do.
function answerExtension(request) {
  const reply = { type: "extension_ui_response", id: request.id };
  if (request.method === "confirm") {
    reply.confirmed = window.confirm((request.title || "") + (request.message ? "\n\n" + request.message : ""));
  } else if (request.method === "select" || request.method === "input" || request.method === "editor") {
    const options = Array.isArray(request.options) ? "\n" + request.options.join("\n") : "";
    const value = window.prompt((request.title || "") + options, request.prefill || request.placeholder || "");
    if (value === null) reply.cancelled = true;
    else reply.value = value;
  } else if (request.method === "notify") {
    toast(request.message || "");
    return;
  } else {
    return;
  }
  command(reply).catch((error) => toast(error.message));
}

// ---------------------------------------------------------------- start

async function start() {
  state.token = takeToken();
  themes.start();
  buildFilters();
  document.getElementById("theme-toggle").addEventListener("click", () => themes.toggle());
  document.getElementById("new-session").addEventListener("click", () => newSession().catch((error) => toast(error.message)));
  let searchTimer = 0;
  document.getElementById("session-search").addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(() => loadSessions().catch((error) => toast(error.message)), 150);
  });
  document.getElementById("session-list").addEventListener("click", (event) => {
    const row = event.target.closest("[data-session-id]");
    if (row) openSession(row.dataset.sessionId).catch((error) => toast(error.message));
  });
  document.getElementById("tree-search").addEventListener("input", (event) => {
    state.search = event.target.value;
    refreshTree();
  });
  treeNode.addEventListener("click", onTreeClick);
  conversationNode.addEventListener("click", onChatClick);
  document.getElementById("prompt-form").addEventListener("submit", (event) => {
    event.preventDefault();
    send(null);
  });
  document.getElementById("prompt").addEventListener("keydown", onPromptKey);
  document.getElementById("follow-up").addEventListener("click", () => send("follow_up"));
  document.getElementById("abort").addEventListener("click", abortRun);
  for (const button of document.querySelectorAll("[data-move]")) {
    button.addEventListener("click", () => moveTo(button.dataset.move));
  }
  document.getElementById("label-save").addEventListener("click", saveLabel);
  document.getElementById("entry-cancel").addEventListener("click", () => document.getElementById("entry-dialog").close());
  setRuntime("idle");
  if (!state.token) {
    toast("No token: open the address pi-tui serve printed (it ends in ?token=...)");
    return;
  }
  try {
    await loadSessions();
    const wanted = new URLSearchParams(location.hash.slice(1)).get("session");
    const first = wanted || (state.sessions.length ? state.sessions[0].id : null);
    if (first) await openSession(first);
    else await newSession();
  } catch (error) {
    toast(error.message);
  }
}

window.piServe = { state, openSession, loadTree, command };
start();
