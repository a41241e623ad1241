// Code highlighting without a library: one tokenizer per family of languages (comments,
// strings, numbers, words), keywords per language. Good enough to read code in a transcript;
// tokens become spans holding text nodes, so code is never markup.

const WORDS = {
  python: "and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case None True False self",
  js: "async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield null undefined true false interface type enum implements declare readonly private public protected as keyof",
  shell: "if then else elif fi for while until do done case esac in function return local export readonly unset echo exit set source cd",
  rust: "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while",
  go: "break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false",
  c: "auto break case char const continue default do double else enum extern float for goto if inline int long register return short signed sizeof static struct switch typedef union unsigned void volatile while class public private protected new delete this template typename namespace using bool true false null nullptr package import extends implements final abstract throws throw try catch finally",
  json: "true false null",
  sql: "select from where and or not insert into values update set delete create table drop alter join left right inner outer on group by order having limit as distinct null is in like",
};

const FAMILY = {
  py: "python", python: "python", js: "js", javascript: "js", ts: "js", typescript: "js", jsx: "js",
  tsx: "js", mjs: "js", cjs: "js", sh: "shell", bash: "shell", zsh: "shell", shell: "shell",
  console: "shell", rs: "rust", rust: "rust", go: "go", c: "c", h: "c", cpp: "c", cc: "c",
  hpp: "c", java: "c", kt: "c", cs: "c", swift: "c", json: "json", jsonl: "json", sql: "sql",
};

const COMMENT = {
  python: "#[^\\n]*", shell: "#[^\\n]*", sql: "--[^\\n]*", json: null,
};

const KEYWORD_SETS = {};

function tokenizer(family) {
  const comment = family in COMMENT ? COMMENT[family] : "\\/\\/[^\\n]*|\\/\\*[\\s\\S]*?\\*\\/";
  const strings = family === "python"
    ? "[rbfuRBFU]{0,2}(?:\"\"\"[\\s\\S]*?\"\"\"|'''[\\s\\S]*?'''|\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])*')"
    : "\"(?:\\\\.|[^\"\\\\\\n])*\"|'(?:\\\\.|[^'\\\\\\n])*'|`(?:\\\\.|[^`\\\\])*`";
  const parts = [
    comment ? "(" + comment + ")" : "(\\u0000never)",
    "(" + strings + ")",
    "(\\b(?:0[xX][0-9a-fA-F_]+|\\d[\\d_]*(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)\\b)",
    "([A-Za-z_$][\\w$]*)",
  ];
  return new RegExp(parts.join("|"), "g");
}

P.languageOf = function (hint) {
  const name = String(hint || "").toLowerCase().replace(/^.*\./, "");
  return FAMILY[name] || null;
};

P.highlight = function (code, language) {
  const fragment = document.createDocumentFragment();
  const family = FAMILY[String(language || "").toLowerCase()] || null;
  if (!family || code.length > 200000) {
    fragment.appendChild(document.createTextNode(code));
    return fragment;
  }
  const keywords = KEYWORD_SETS[family] || (KEYWORD_SETS[family] = new Set(WORDS[family].split(" ")));
  const pattern = tokenizer(family);
  let last = 0;
  let match;
  const span = (cls, text) => fragment.appendChild(P.el("span", cls, text));
  while ((match = pattern.exec(code)) !== null) {
    if (match[0] === "") {
      pattern.lastIndex++;
      continue;
    }
    if (match.index > last) fragment.appendChild(document.createTextNode(code.slice(last, match.index)));
    last = pattern.lastIndex;
    if (match[1] !== undefined) span("hl-comment", match[1]);
    else if (match[2] !== undefined) span("hl-string", match[2]);
    else if (match[3] !== undefined) span("hl-number", match[3]);
    else {
      const word = match[4];
      if (keywords.has(family === "sql" ? word.toLowerCase() : word)) span("hl-keyword", word);
      else if (code[last] === "(") span("hl-function", word);
      else if (/^[A-Z][a-z0-9]/.test(word)) span("hl-type", word);
      else fragment.appendChild(document.createTextNode(word));
    }
  }
  if (last < code.length) fragment.appendChild(document.createTextNode(code.slice(last)));
  return fragment;
};

P.codeBlock = function (code, language) {
  const pre = P.el("pre", "code-block");
  const family = P.languageOf(language) ? String(language).toLowerCase().replace(/^.*\./, "") : null;
  if (language) pre.dataset.language = String(language).slice(0, 40);
  const inner = pre.appendChild(P.el("code"));
  inner.appendChild(P.highlight(code, family));
  return pre;
};
