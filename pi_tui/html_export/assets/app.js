// The page: header, tree sidebar (filters, search, keyboard), conversation, deep links, theme.
// window.piExport is the documented handle for scripts and tests (docs/export.md).

const ROW_HEIGHT = 22;
const FILTER_TITLES = P.FILTER_TITLES;
const THEME_KEY = "pi-export-theme";

function readJson(id) {
  const node = document.getElementById(id);
  return node ? JSON.parse(node.textContent) : null;
}

const summary = readJson("pi-summary") || {};
const palettes = readJson("pi-themes") || [];
const tree = readJson("pi-tree");
const entriesNode = document.getElementById("pi-entries");
const store = new P.EntryStore(entriesNode ? entriesNode.textContent : "");
const layout = new P.TreeLayout(tree);
const transcript = new P.Transcript(store, tree.files);

const state = {
  filter: "default",
  search: "",
  view: null,
  selected: -1, // tree index of the selected entry
  branchOf: -1, // tree index the shown branch goes through
  target: null, // entry id to highlight in the conversation
  expanded: new Set(),
};

const themes = new P.ThemeSwitch(palettes, THEME_KEY);

// ---------------------------------------------------------------- header

function renderSummary() {
  const header = document.getElementById("summary");
  P.clear(header);
  const title = header.appendChild(P.el("div", "summary-title-row"));
  title.appendChild(P.el("h1", "session-name", summary.name || "pi-tui session"));
  const download = title.appendChild(P.el("button", "download-jsonl", "\u2193 JSONL"));
  download.id = "download-jsonl";
  download.type = "button";
  download.title = "Download the session file (.jsonl)";
  download.addEventListener("click", () => P.downloadJsonl(summary.file || (summary.id || "session") + ".jsonl"));
  const toggle = title.appendChild(P.el("button", "theme-toggle"));
  toggle.id = "theme-toggle";
  toggle.type = "button";
  toggle.title = "Switch between dark and light";
  toggle.addEventListener("click", () => themes.toggle());
  const facts = header.appendChild(P.el("dl", "facts"));
  const fact = (name, value) => {
    if (value === null || value === undefined || value === "") return;
    const item = facts.appendChild(P.el("div", "fact"));
    item.appendChild(P.el("dt", null, name));
    item.appendChild(P.el("dd", null, value));
  };
  const tokens = summary.tokens || {};
  fact("Folder", summary.cwd);
  fact("Started", P.formatDate(summary.created));
  fact("Last entry", P.formatDate(summary.modified));
  fact("Models", (summary.models || []).join(", ") || "none");
  fact("Entries", String(summary.entryCount || 0));
  const parts = ["\u2191" + P.formatCount(tokens.input || 0), "\u2193" + P.formatCount(tokens.output || 0)];
  if (tokens.cacheRead) parts.push("R" + P.formatCount(tokens.cacheRead));
  if (tokens.cacheWrite) parts.push("W" + P.formatCount(tokens.cacheWrite));
  fact("Tokens", parts.join(" "));
  fact("Cost", "$" + Number(summary.cost || 0).toFixed(3));
  P.renderContext(header, readJson("pi-context"));
}

// ---------------------------------------------------------------- tree

const treeNode = document.getElementById("tree");
const treeList = new P.VirtualList(treeNode, {
  fixed: true,
  threshold: 400,
  overscan: 40 * ROW_HEIGHT,
  estimate: () => ROW_HEIGHT,
  render: renderRow,
});

function renderRow(row) {
  return P.treeRow(layout, state.view, row, state.selected);
}

function refreshTree(keepScroll) {
  const top = treeNode.scrollTop;
  state.view = layout.view(state.filter, state.search);
  treeList.reset(state.view.visible.length);
  if (keepScroll) treeNode.scrollTop = top;
  for (const button of document.querySelectorAll("[data-filter]")) {
    const on = button.dataset.filter === state.filter;
    button.classList.toggle("active", on);
    button.setAttribute("aria-pressed", on ? "true" : "false");
  }
  updateCounter();
  if (state.selected >= 0) {
    const row = state.view.rowOf.get(state.selected);
    if (row !== undefined) treeList.scrollTo(row, "nearest");
  }
}

function updateCounter() {
  const view = state.view;
  const row = view.rowOf.get(state.selected);
  const counter = document.getElementById("tree-counter");
  counter.textContent = view.visible.length
    ? "(" + (row === undefined ? "-" : row + 1) + "/" + view.visible.length + ")"
    : "No entries found";
}

function selectRow(row, open) {
  const view = state.view;
  if (row < 0 || row >= view.visible.length) return;
  setSelected(view.visible[row]);
  treeList.scrollTo(row, "nearest");
  revealRowText(row);
  if (open) showBranch(view.visible[row], true);
}

// Deep branches indent far to the right (as /tree does); keep the selected row's text in view.
function revealRowText(row) {
  const node = treeList.nodeAt(row);
  const gutter = node ? node.querySelector(".gutter") : null;
  if (!gutter) return;
  const start = gutter.offsetLeft + gutter.offsetWidth;
  const width = treeNode.clientWidth;
  if (start < treeNode.scrollLeft + 24 || start > treeNode.scrollLeft + width * 0.6) {
    treeNode.scrollLeft = Math.max(0, start - Math.min(120, width * 0.25));
  }
}

function setSelected(index) {
  const before = state.selected;
  state.selected = index;
  for (const idx of [before, index]) {
    const row = state.view.rowOf.get(idx);
    const node = row === undefined ? null : treeList.nodeAt(row);
    if (node) {
      const on = idx === index;
      node.classList.toggle("selected", on);
      node.setAttribute("aria-selected", on ? "true" : "false");
    }
  }
  treeNode.setAttribute("aria-activedescendant", "");
  updateCounter();
}

function onTreeKey(event) {
  const view = state.view;
  let row = view.rowOf.get(state.selected);
  if (row === undefined) row = layout.nearestVisible(view, state.selected);
  const page = Math.max(1, Math.floor(treeNode.clientHeight / ROW_HEIGHT) - 1);
  const moves = {
    ArrowDown: row + 1, ArrowUp: row - 1, PageDown: row + page, PageUp: row - page,
    Home: 0, End: view.visible.length - 1,
  };
  if (event.key in moves) {
    event.preventDefault();
    selectRow(Math.max(0, Math.min(view.visible.length - 1, moves[event.key])), false);
  } else if (event.key === "Enter" || event.key === " ") {
    event.preventDefault();
    if (row >= 0) selectRow(row, true);
  } else if (event.key === "ArrowLeft") {
    event.preventDefault();
    const parent = row >= 0 ? view.vparent[row] : -1;
    if (parent >= 0) selectRow(parent, false);
  } else if (event.key === "ArrowRight") {
    event.preventDefault();
    if (row >= 0 && view.nchildren[row] > 0) selectRow(row + 1, false);
  }
}

function setFilter(filter) {
  if (!(filter in FILTER_TITLES)) return;
  state.filter = filter;
  refreshTree(false);
}

let searchTimer = 0;
function setSearch(text) {
  state.search = text;
  refreshTree(false);
}

// ---------------------------------------------------------------- conversation

const conversationNode = document.getElementById("conversation");
const conversationList = new P.VirtualList(conversationNode, {
  threshold: 300,
  overscan: 1200,
  estimate: estimateEntry,
  render: renderPosition,
});

function estimateEntry(position) {
  const index = transcript.branch[position];
  const kind = tree.kinds[index];
  if (kind === 1 || kind === 2) return kind === 2 && /^\[(model|thinking|title)/.test(tree.texts[index]) ? 34 : 0;
  const size = store.size(index);
  return 56 + Math.min(900, Math.ceil(size / 110) * 20);
}

function renderPosition(position) {
  const index = transcript.branch[position];
  const items = transcript.items(position);
  return P.renderEntry(tree.ids[index], items, {
    cwd: summary.cwd,
    expanded: state.expanded,
    labelOf: (id) => {
      const i = layout.indexOf(id);
      return i >= 0 ? layout.label(i) : null;
    },
    targetId: state.target,
  });
}

function showBranch(index, scroll, highlight) {
  const branch = layout.branchThrough(index);
  const sameBranch = state.branchOf >= 0 && transcript.branch.length === branch.length &&
    transcript.branch[branch.length - 1] === branch[branch.length - 1] && transcript.branch[0] === branch[0];
  state.target = highlight === false ? null : tree.ids[index];
  if (!sameBranch) {
    transcript.setBranch(branch);
    conversationList.reset(branch.length);
  } else {
    conversationList.refresh();
  }
  state.branchOf = index;
  conversationNode.dataset.branchOf = tree.ids[index];
  if (scroll) conversationList.scrollTo(branch.indexOf(index), "start");
}

function onConversationClick(event) {
  if (P.toggleFrom(event, state.expanded)) {
    conversationList.refresh();
    return;
  }
  const link = event.target.closest("[data-copy-link]");
  if (link) {
    event.preventDefault();
    copyLink(link.dataset.copyLink);
  }
}

function onToggle(event) {
  const details = event.target;
  if (!details.dataset || !details.dataset.toggleKey) return;
  if (details.open) state.expanded.add(details.dataset.toggleKey);
  else state.expanded.delete(details.dataset.toggleKey);
  conversationList.schedule();
}

function copyLink(id) {
  const url = location.href.split("#")[0] + "#" + encodeURIComponent(id);
  try {
    history.replaceState(null, "", "#" + encodeURIComponent(id));
  } catch (error) {
    /* some file: pages refuse; the copy still works */
  }
  const done = () => toast("Link copied");
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(url).then(done, () => fallbackCopy(url) && done());
  } else if (fallbackCopy(url)) {
    done();
  }
}

function fallbackCopy(text) {
  const area = P.el("textarea", "offscreen");
  area.value = text;
  document.body.appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch (error) {
    ok = false;
  }
  area.remove();
  return ok;
}

function toast(text) {
  let node = document.getElementById("toast");
  if (!node) {
    node = document.body.appendChild(P.el("div", "toast"));
    node.id = "toast";
    node.setAttribute("role", "status");
  }
  node.textContent = text;
  node.classList.add("shown");
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => node.classList.remove("shown"), 1500);
}

// ---------------------------------------------------------------- deep links

function openEntry(id, scroll) {
  const index = layout.indexOf(id);
  if (index < 0) return false;
  if (state.view.rowOf.get(index) === undefined && state.filter !== "all") {
    const shown = layout.view(state.filter, state.search).rowOf.get(index);
    if (shown === undefined) setFilter("all");
  }
  setSelected(index);
  const row = state.view.rowOf.get(index);
  if (row !== undefined) {
    treeList.scrollTo(row, "center");
    revealRowText(row);
  }
  showBranch(index, scroll);
  return true;
}

function fromHash() {
  const raw = location.hash.slice(1);
  if (!raw) return false;
  let id = raw;
  try {
    id = decodeURIComponent(raw);
  } catch (error) {
    id = raw;
  }
  return openEntry(id, true);
}

// ---------------------------------------------------------------- start

function buildFilters() {
  const group = document.getElementById("tree-filters");
  for (const filter of tree.filters) {
    const button = group.appendChild(P.el("button", "filter", FILTER_TITLES[filter] || filter));
    button.type = "button";
    button.dataset.filter = filter;
    button.addEventListener("click", () => setFilter(filter));
  }
}

function start() {
  renderSummary();
  themes.start();
  buildFilters();
  document.title = (summary.name || "Session") + " \u2013 pi-tui";
  treeNode.addEventListener("keydown", onTreeKey);
  treeNode.addEventListener("click", (event) => {
    const row = event.target.closest(".row");
    if (row) {
      treeNode.focus({ preventScroll: true });
      selectRow(Number(row.dataset.row), true);
    }
  });
  const search = document.getElementById("tree-search");
  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    const delay = tree.ids.length > 5000 ? 120 : 0;
    searchTimer = setTimeout(() => setSearch(search.value), delay);
  });
  search.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "Enter") {
      event.preventDefault();
      treeNode.focus();
      if (event.key === "Enter") onTreeKey(event);
    } else if (event.key === "Escape") {
      search.value = "";
      setSearch("");
    }
  });
  conversationNode.addEventListener("click", onConversationClick);
  conversationNode.addEventListener("toggle", onToggle, true);
  window.addEventListener("hashchange", fromHash);
  refreshTree(false);
  if (!fromHash()) {
    const leaf = tree.leaf === null ? -1 : layout.indexOf(tree.leaf);
    const start = leaf >= 0 ? leaf : tree.ids.length - 1;
    if (start >= 0) {
      setSelected(start);
      const row = state.view.rowOf.get(start);
      if (row !== undefined) {
        treeList.scrollTo(row, "nearest");
        revealRowText(row);
      }
      showBranch(start, false, false);
    }
  }
  requestAnimationFrame(() => requestAnimationFrame(() => {
    api.firstPaintMs = performance.now();
    document.documentElement.dataset.ready = "true";
  }));
}

const api = {
  firstPaintMs: null,
  rows: () => state.view.visible.map((index) => tree.ids[index]),
  rowLines: () => state.view.visible.map((index, row) => {
    const label = layout.label(index);
    return state.view.prefixes[row] + (layout.onPath[index] ? "\u2022 " : "") + (label ? "[" + label + "] " : "") + tree.texts[index];
  }),
  parents: () => state.view.visible.map((index, row) => {
    const parent = state.view.vparent[row];
    return parent >= 0 ? tree.ids[state.view.visible[parent]] : null;
  }),
  branch: () => transcript.branch.map((index) => tree.ids[index]),
  selected: () => (state.selected >= 0 ? tree.ids[state.selected] : null),
  filter: () => state.filter,
  setFilter,
  setSearch: (text) => {
    document.getElementById("tree-search").value = text;
    setSearch(text);
  },
  open: (id) => openEntry(id, true),
};
window.piExport = api;
start();
