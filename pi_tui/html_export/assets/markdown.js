// A small markdown renderer that builds DOM nodes: fenced code (highlighted), headings, lists,
// quotes, tables, rules, paragraphs; inline code, emphasis, strikethrough and links. Text is
// only ever added as text nodes; a link keeps its target only for http(s), mailto and #.

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

function startsBlock(line) {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || ITEM.test(line);
}

function splitRow(line) {
  let text = line.trim();
  if (text.startsWith("|")) text = text.slice(1);
  if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
  return text.split(/(?<!\\)\|/).map((cell) => cell.trim().replace(/\\\|/g, "|"));
}

P.renderMarkdown = function (source, depth) {
  const root = P.el("div", "md");
  renderBlocks(root, String(source || "").replace(/\r\n?/g, "\n").split("\n"), depth || 0);
  return root;
};

function renderBlocks(parent, lines, depth) {
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      i++;
      continue;
    }
    let match = FENCE.exec(line);
    if (match) {
      const fence = match[1];
      const body = [];
      i++;
      const closing = new RegExp("^ {0,3}" + (fence[0] === "`" ? "`" : "~") + "{" + fence.length + ",}\\s*$");
      while (i < lines.length && !closing.test(lines[i])) {
        body.push(lines[i]);
        i++;
      }
      i++; // the closing fence (or the end)
      parent.appendChild(P.codeBlock(body.join("\n"), match[2]));
      continue;
    }
    match = HEADING.exec(line);
    if (match) {
      const heading = P.el("h" + Math.min(6, match[1].length + 2), "md-h");
      renderInline(heading, match[2]);
      parent.appendChild(heading);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      parent.appendChild(P.el("hr", "md-hr"));
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && lines[i].trim() && QUOTE.test(lines[i])) {
        body.push(QUOTE.exec(lines[i])[1]);
        i++;
      }
      const quote = P.el("blockquote", "md-quote");
      if (depth < 8) renderBlocks(quote, body, depth + 1);
      else quote.textContent = body.join("\n");
      parent.appendChild(quote);
      continue;
    }
    match = ITEM.exec(line);
    if (match) {
      i = renderList(parent, lines, i, depth);
      continue;
    }
    if (line.includes("|") && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]) && lines[i + 1].includes("-")) {
      const table = P.el("table", "md-table");
      const head = P.el("tr");
      for (const cell of splitRow(line)) renderInline(head.appendChild(P.el("th")), cell);
      table.appendChild(P.el("thead")).appendChild(head);
      const body = table.appendChild(P.el("tbody"));
      i += 2;
      while (i < lines.length && lines[i].includes("|") && lines[i].trim()) {
        const row = body.appendChild(P.el("tr"));
        for (const cell of splitRow(lines[i])) renderInline(row.appendChild(P.el("td")), cell);
        i++;
      }
      const wrap = P.el("div", "md-table-wrap");
      wrap.appendChild(table);
      parent.appendChild(wrap);
      continue;
    }
    const paragraph = [];
    while (i < lines.length && lines[i].trim() && (paragraph.length === 0 || !startsBlock(lines[i]))) {
      paragraph.push(lines[i]);
      i++;
    }
    const node = P.el("p");
    renderInline(node, paragraph.join("\n"));
    parent.appendChild(node);
  }
}

function renderList(parent, lines, start, depth) {
  const first = ITEM.exec(lines[start]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const list = P.el(ordered ? "ol" : "ul", "md-list");
  if (ordered) {
    const number = parseInt(first[2], 10);
    if (number !== 1) list.start = number;
  }
  let i = start;
  while (i < lines.length) {
    const match = ITEM.exec(lines[i]);
    if (!match || match[1].length !== indent || /\d/.test(match[2]) !== ordered) break;
    const body = [match[3]];
    i++;
    while (i < lines.length) {
      const next = lines[i];
      if (!next.trim()) {
        // a blank line continues the item only when indented text follows
        if (i + 1 < lines.length && /^\s+\S/.test(lines[i + 1]) && lines[i + 1].search(/\S/) > indent) {
          body.push("");
          i++;
          continue;
        }
        break;
      }
      const nested = ITEM.exec(next);
      if (nested && nested[1].length <= indent) break;
      if (!nested && next.search(/\S/) <= indent && startsBlock(next)) break;
      body.push(next.slice(Math.min(next.search(/\S/), indent + 2)));
      i++;
    }
    const item = list.appendChild(P.el("li"));
    if (body.length === 1 || depth >= 8) renderInline(item, body.join("\n"));
    else renderBlocks(item, body, depth + 1);
    if (item.childNodes.length === 1 && item.firstChild.nodeName === "P") {
      const only = item.firstChild;
      while (only.firstChild) item.appendChild(only.firstChild);
      item.removeChild(only);
    }
  }
  parent.appendChild(list);
  return i;
}

// Inline: the earliest of code, link, autolink, strong, emphasis, strikethrough wins.
const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|!?\[([^\]\n]*)\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)|<(https?:\/\/[^\s>]+)>|(\*\*|__)(?=\S)([\s\S]*?\S)\6|(\*|_)(?=[^\s*_])([\s\S]*?[^\s\\])\8(?![\w*])|~~(?=\S)([\s\S]*?\S)~~|(https?:\/\/[^\s<>()]*[^\s<>().,;:!?'"])/g;

function renderInline(parent, text, depth) {
  depth = depth || 0;
  const pattern = new RegExp(INLINE.source, "g");
  let last = 0;
  let match;
  while ((match = pattern.exec(text)) !== null) {
    if (match.index > last) appendText(parent, text.slice(last, match.index));
    last = pattern.lastIndex;
    if (match[1] !== undefined) {
      parent.appendChild(P.el("code", "md-code", match[2].replace(/^ (.*) $/, "$1")));
    } else if (match[3] !== undefined) {
      const isImage = match[0].startsWith("!");
      const url = P.safeUrl(match[4]);
      if (isImage || !url) {
        appendText(parent, isImage ? "[image: " + (match[3] || match[4]) + "]" : match[3] + " (" + match[4] + ")");
      } else {
        const link = P.el("a", "md-link");
        link.href = url;
        link.rel = "noopener noreferrer";
        link.target = "_blank";
        if (depth < 4) renderInline(link, match[3] || url, depth + 1);
        else link.textContent = match[3] || url;
        parent.appendChild(link);
      }
    } else if (match[5] !== undefined || match[11] !== undefined) {
      const url = match[5] || match[11];
      const link = P.el("a", "md-link", url);
      link.href = url;
      link.rel = "noopener noreferrer";
      link.target = "_blank";
      parent.appendChild(link);
    } else if (match[6] !== undefined) {
      const strong = parent.appendChild(P.el("strong"));
      if (depth < 4) renderInline(strong, match[7], depth + 1);
      else strong.textContent = match[7];
    } else if (match[8] !== undefined) {
      const em = parent.appendChild(P.el("em"));
      if (depth < 4) renderInline(em, match[9], depth + 1);
      else em.textContent = match[9];
    } else if (match[10] !== undefined) {
      const del = parent.appendChild(P.el("del"));
      if (depth < 4) renderInline(del, match[10], depth + 1);
      else del.textContent = match[10];
    }
  }
  if (last < text.length) appendText(parent, text.slice(last));
}

// Hard line breaks: a newline inside a paragraph is kept (models write lists of lines).
function appendText(parent, text) {
  const parts = text.split("\n");
  parts.forEach((part, index) => {
    if (index > 0) parent.appendChild(document.createElement("br"));
    if (part) parent.appendChild(document.createTextNode(part.replace(/\\([\\`*_{}\[\]()#+\-.!|~])/g, "$1")));
  });
}

P.renderInline = renderInline;
