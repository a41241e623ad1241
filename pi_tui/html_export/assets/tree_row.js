// One row of the /tree selector as the page draws it (the export page and the live page of
// pi-tui serve share it): gutter, path marker, label, the row text coloured by kind.

function rowRole(text) {
  if (text.startsWith("user: ")) return " role-user";
  if (text.startsWith("assistant: ")) return " role-assistant";
  return "";
}

function depthOf(view, row) {
  let depth = 1;
  for (let current = view.vparent[row]; current >= 0; current = view.vparent[current]) depth++;
  return depth;
}

P.treeRow = function (layout, view, row, selected) {
  const tree = layout.tree;
  const index = view.visible[row];
  const id = tree.ids[index];
  const node = P.el("div", "row");
  node.setAttribute("role", "treeitem");
  node.dataset.entryId = id;
  node.dataset.row = String(row);
  const parentRow = view.vparent[row];
  if (parentRow >= 0) node.dataset.parentId = tree.ids[view.visible[parentRow]];
  node.setAttribute("aria-level", String(depthOf(view, row)));
  node.setAttribute("aria-selected", index === selected ? "true" : "false");
  if (index === selected) node.classList.add("selected");
  if (layout.onPath[index]) node.classList.add("on-path");
  if (view.nchildren[row] > 0) node.setAttribute("aria-expanded", "true");
  node.appendChild(P.el("span", "gutter", view.prefixes[row]));
  if (layout.onPath[index]) node.appendChild(P.el("span", "path-marker", "\u2022 "));
  const label = layout.label(index);
  if (label) node.appendChild(P.el("span", "row-label", "[" + label + "] "));
  const text = tree.texts[index];
  node.appendChild(P.el("span", "row-text kind-" + tree.kindNames[tree.kinds[index]] + rowRole(text), text));
  const labelTime = label && tree.labelTimes ? tree.labelTimes[id] : null;
  node.title = labelTime ? text + "\n[" + label + "] set " + P.formatDate(labelTime) : text;
  return node;
};

P.FILTER_TITLES = {
  "default": "Default", "no-tools": "No tools", "user-only": "User", "labeled-only": "Labelled", "all": "All",
};
