// Building the document from data. Everything that came from the session goes in as a text
// node (textContent): never through innerHTML, so a message holding markup stays text.

P.el = function (tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null && text !== "") node.textContent = String(text);
  return node;
};

P.append = function (parent, ...children) {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "string" ? document.createTextNode(child) : child);
  }
  return parent;
};

P.clear = function (node) {
  while (node.firstChild) node.removeChild(node.firstChild);
};

// Only these become links; anything else (javascript:, data:, file:) is shown as text.
P.safeUrl = function (url) {
  const value = String(url || "").trim();
  return /^(https?:\/\/|mailto:|#)/i.test(value) ? value : null;
};

P.imageSource = function (block) {
  if (!block || typeof block.data !== "string") return null;
  const mime = String(block.mimeType || block.mediaType || "");
  if (!/^image\/(png|jpe?g|gif|webp|bmp)$/i.test(mime)) return null;
  if (!/^[A-Za-z0-9+/=\s]*$/.test(block.data)) return null;
  return "data:" + mime.toLowerCase() + ";base64," + block.data.replace(/\s+/g, "");
};

P.formatCount = function (n) {
  if (!n) return "0";
  if (n < 1000) return String(n);
  if (n < 10000) return (n / 1000).toFixed(1) + "k";
  if (n < 1000000) return Math.round(n / 1000) + "k";
  if (n < 10000000) return (n / 1000000).toFixed(1) + "M";
  return Math.round(n / 1000000) + "M";
};

P.formatDate = function (iso) {
  if (!iso) return "";
  const date = new Date(iso);
  if (isNaN(date.getTime())) return String(iso);
  const pad = (n) => String(n).padStart(2, "0");
  return date.getFullYear() + "-" + pad(date.getMonth() + 1) + "-" + pad(date.getDate()) + " " +
    pad(date.getHours()) + ":" + pad(date.getMinutes());
};

// The page's two pi themes (the user's and the opposite built-in): the colours become the
// page's --custom-properties; the choice is remembered per browser under storageKey.
P.ThemeSwitch = class ThemeSwitch {
  constructor(palettes, storageKey) {
    this.palettes = palettes;
    this.storageKey = storageKey;
    this.index = 0;
  }

  start() {
    let saved = null;
    try {
      saved = localStorage.getItem(this.storageKey);
    } catch (error) {
      saved = null; // storage may be off (file: pages, private windows)
    }
    const found = this.palettes.findIndex((palette) => palette.name === saved);
    this.apply(found >= 0 ? found : 0);
  }

  toggle() {
    this.apply(this.index === 0 ? 1 : 0);
    try {
      localStorage.setItem(this.storageKey, this.palettes[this.index].name);
    } catch (error) {
      /* not remembered, still applied */
    }
  }

  apply(index) {
    const palette = this.palettes[index];
    if (!palette) return;
    this.index = index;
    const style = document.documentElement.style;
    for (const [token, value] of Object.entries(palette.colors)) {
      style.setProperty("--" + token.replace(/([A-Z])/g, "-$1").toLowerCase(), value);
    }
    document.documentElement.dataset.theme = palette.dark ? "dark" : "light";
    const button = document.getElementById("theme-toggle");
    if (button) button.textContent = palette.dark ? "Light theme" : "Dark theme";
  }
};
