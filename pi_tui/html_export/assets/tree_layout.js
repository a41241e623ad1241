// The /tree selector's layout, for any filter and search: which entries show and with which
// gutter. It follows pi-tui's tree model (pi_tui/view/tree_model.py) step for step; the export
// tests compare its rows with that model's for every filter, so the two cannot drift apart.
// The input is the flattened tree: pre-order, the branch holding the leaf first, each subtree
// a contiguous slice (ends[i] is one past the last entry under i).

P.TreeLayout = class TreeLayout {
  constructor(tree) {
    this.tree = tree;
    this.count = tree.ids.length;
    this.onPath = new Uint8Array(this.count);
    for (const index of tree.path) this.onPath[index] = 1;
    this.position = new Map();
    tree.ids.forEach((id, index) => this.position.set(id, index));
    this.views = new Map();
  }

  indexOf(id) {
    const index = this.position.get(id);
    return index === undefined ? -1 : index;
  }

  label(index) {
    const label = this.tree.labels[this.tree.ids[index]];
    return typeof label === "string" ? label : null;
  }

  // The search text of an entry: what /tree searches, with the label in front.
  haystack(index) {
    let base = this.tree.hay[index];
    if (!base) {
      const lowered = this.tree.texts[index].toLowerCase();
      base = lowered;
      for (const prefix of ["user: ", "assistant: "]) {
        if (lowered.startsWith(prefix)) {
          base = prefix.slice(0, -2) + " " + lowered.slice(prefix.length);
          break;
        }
      }
    }
    const label = this.label(index);
    return label ? label.toLowerCase() + " " + base : base;
  }

  visibleIndices(filter, search) {
    const tree = this.tree;
    const allowed = new Set(tree.allowed[filter] || tree.allowed["default"]);
    const labelled = filter === "labeled-only";
    const kinds = tree.kinds;
    let candidates = [];
    for (let i = 0; i < this.count; i++) {
      if (allowed.has(kinds[i]) && (!labelled || this.label(i) !== null)) candidates.push(i);
    }
    const tokens = String(search || "").toLowerCase().split(/\s+/).filter(Boolean);
    if (tokens.length) {
      candidates = candidates.filter((i) => {
        const hay = this.haystack(i);
        return tokens.every((token) => hay.includes(token));
      });
    }
    return candidates;
  }

  view(filter, search) {
    const plain = !String(search || "").trim();
    if (plain && this.views.has(filter)) return this.views.get(filter);
    const view = this.layout(this.visibleIndices(filter, search));
    if (plain) this.views.set(filter, view);
    return view;
  }

  layout(visible) {
    const ends = this.tree.ends;
    const count = visible.length;
    // Pass 1: the visible tree (nearest visible ancestor, child counts).
    const vparent = new Int32Array(count).fill(-1);
    const nchildren = new Int32Array(count);
    const lastChild = new Int32Array(count).fill(-1);
    const saved = [];
    let top = -1;
    let topEnd = ends.length + 1;
    let lastRoot = -1;
    let rootCount = 0;
    for (let row = 0; row < count; row++) {
      const index = visible[row];
      while (topEnd <= index) [top, topEnd] = saved.pop();
      if (top >= 0) {
        vparent[row] = top;
        nchildren[top] += 1;
        lastChild[top] = row;
      } else {
        lastRoot = row;
        rootCount += 1;
      }
      const end = ends[index];
      if (end > index + 1) {
        saved.push([top, topEnd]);
        top = row;
        topEnd = end;
      }
    }
    const multipleRoots = rootCount > 1;
    // Pass 2: gutters, top-down.
    const prefixes = new Array(count);
    const handedIndent = new Int32Array(count);
    const handedGutter = new Array(count).fill("");
    const through = new Uint8Array(count);
    const plainPrefixes = new Map();
    for (let row = 0; row < count; row++) {
      const parent = vparent[row];
      const own = nchildren[row];
      if (parent >= 0 && through[parent] && own < 2) {
        prefixes[row] = prefixes[parent];
        handedIndent[row] = handedIndent[parent];
        handedGutter[row] = handedGutter[parent];
        through[row] = 1;
        continue;
      }
      let indent, gutter, connector, justBranched, isLast;
      if (parent < 0) {
        indent = multipleRoots ? 1 : 0;
        connector = false;
        justBranched = multipleRoots;
        isLast = row === lastRoot;
        gutter = "";
      } else {
        indent = handedIndent[parent];
        gutter = handedGutter[parent];
        justBranched = connector = nchildren[parent] > 1;
        isLast = lastChild[parent] === row;
      }
      const displayIndent = multipleRoots ? (indent > 0 ? indent - 1 : 0) : indent;
      const width = 3 * displayIndent;
      let prefix;
      if (connector && gutter.length <= width - 3) {
        prefix = gutter.padEnd(width - 3) + (isLast ? "\u2514" : "\u251c") + (own ? "\u229f" : "\u2500") + " ";
      } else {
        const key = gutter + "\u0000" + displayIndent;
        prefix = plainPrefixes.get(key);
        if (prefix === undefined) {
          prefix = gutter.slice(0, width).padEnd(width);
          plainPrefixes.set(key, prefix);
        }
      }
      prefixes[row] = prefix;
      const shift = own > 1 || (justBranched && indent > 0);
      if (connector) {
        const level = 3 * (displayIndent - 1);
        if (gutter.length <= level) gutter = gutter.padEnd(level) + (isLast ? "   " : "\u2502  ");
      } else {
        through[row] = shift ? 0 : 1;
      }
      handedIndent[row] = shift ? indent + 1 : indent;
      handedGutter[row] = gutter;
    }
    const rowOf = new Map();
    for (let row = 0; row < count; row++) rowOf.set(visible[row], row);
    return { visible, vparent, nchildren, prefixes, rowOf };
  }

  // The entry, else its nearest ancestor, that the view shows (for keeping the selection).
  nearestVisible(view, index) {
    let current = index;
    while (current >= 0) {
      const row = view.rowOf.get(current);
      if (row !== undefined) return row;
      current = this.tree.parents[current];
    }
    return view.visible.length ? view.visible.length - 1 : -1;
  }

  // The branch through an entry: its ancestors, itself, then down to the end. An entry on the
  // current path ends at the session's leaf; any other follows first children to a tree leaf.
  branchThrough(index) {
    const up = [];
    for (let current = index; current >= 0; current = this.tree.parents[current]) up.push(current);
    up.reverse();
    const leaf = this.tree.leaf === null ? -1 : this.indexOf(this.tree.leaf);
    const ends = this.tree.ends;
    let current = index;
    if (this.onPath[index] && leaf >= 0) {
      while (current !== leaf && ends[current] > current + 1) {
        current += 1;
        up.push(current);
      }
    } else {
      while (ends[current] > current + 1) {
        current += 1;
        up.push(current);
      }
    }
    return up;
  }
};
