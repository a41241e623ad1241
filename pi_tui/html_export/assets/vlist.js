// A virtual list: only the items in (and near) the viewport are in the document. Heights start
// as estimates and become measurements once an item has been drawn; the item at the top of the
// viewport stays put while heights above it are corrected, so scrolling never jumps. Short
// lists are drawn whole (their items are then all in the document, as scripts may expect).

P.VirtualList = class VirtualList {
  constructor(viewport, options) {
    this.viewport = viewport;
    this.render = options.render;
    this.estimate = options.estimate;
    this.fixed = !!options.fixed;
    this.overscan = options.overscan || 600;
    this.threshold = options.threshold || 0;
    this.before = P.el("div", "vlist-spacer");
    this.body = P.el("div", "vlist-body");
    this.after = P.el("div", "vlist-spacer");
    P.clear(viewport);
    P.append(viewport, this.before, this.body, this.after);
    this.nodes = new Map();
    this.count = 0;
    this.first = 0;
    this.last = -1;
    this.pending = false;
    viewport.addEventListener("scroll", () => this.schedule(), { passive: true });
    if (typeof ResizeObserver !== "undefined") {
      new ResizeObserver(() => this.schedule()).observe(viewport);
    }
  }

  reset(count) {
    this.count = count;
    this.heights = new Float64Array(count);
    for (let i = 0; i < count; i++) this.heights[i] = this.estimate(i);
    this.offsets = new Float64Array(count + 1);
    this.recompute();
    for (const node of this.nodes.values()) node.remove();
    this.nodes.clear();
    this.first = 0;
    this.last = -1;
    this.viewport.scrollTop = 0;
    this.update();
  }

  // Redraw the items on screen (their data changed); positions are kept.
  refresh() {
    for (const node of this.nodes.values()) node.remove();
    this.nodes.clear();
    this.first = 0;
    this.last = -1;
    this.update();
  }

  recompute() {
    const offsets = this.offsets;
    for (let i = 0; i < this.count; i++) offsets[i + 1] = offsets[i] + this.heights[i];
  }

  indexAt(y) {
    let low = 0;
    let high = this.count - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.offsets[mid] <= y) low = mid;
      else high = mid - 1;
    }
    return Math.max(0, low);
  }

  schedule() {
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(() => {
      this.pending = false;
      this.update();
    });
  }

  update() {
    if (!this.count) {
      this.before.style.height = "0px";
      this.after.style.height = "0px";
      return;
    }
    const whole = this.count <= this.threshold;
    const top = this.viewport.scrollTop;
    let first, last;
    if (whole) {
      first = 0;
      last = this.count - 1;
    } else {
      const height = this.viewport.clientHeight || 800;
      first = this.indexAt(Math.max(0, top - this.overscan));
      last = this.indexAt(top + height + this.overscan);
    }
    if (first !== this.first || last !== this.last) this.draw(first, last);
    if (!this.fixed) this.measure(top);
  }

  draw(first, last) {
    for (const [index, node] of this.nodes) {
      if (index < first || index > last) {
        node.remove();
        this.nodes.delete(index);
      }
    }
    let previous = null;
    for (let index = first; index <= last; index++) {
      let node = this.nodes.get(index);
      if (!node) {
        node = this.render(index);
        this.nodes.set(index, node);
        if (previous) previous.after(node);
        else this.body.prepend(node);
      }
      previous = node;
    }
    this.first = first;
    this.last = last;
    this.before.style.height = this.offsets[first] + "px";
    this.after.style.height = this.offsets[this.count] - this.offsets[last + 1] + "px";
  }

  // Replace estimates by the drawn heights; keep the item at the top where it was.
  measure(top) {
    const anchor = this.indexAt(top);
    const within = top - this.offsets[anchor];
    let changed = false;
    for (const [index, node] of this.nodes) {
      const height = node.offsetHeight;
      if (Math.abs(height - this.heights[index]) > 0.5) {
        this.heights[index] = height;
        changed = true;
      }
    }
    if (!changed) return;
    this.recompute();
    this.before.style.height = this.offsets[this.first] + "px";
    this.after.style.height = this.offsets[this.count] - this.offsets[this.last + 1] + "px";
    const wanted = this.offsets[anchor] + within;
    if (Math.abs(this.viewport.scrollTop - wanted) > 1) this.viewport.scrollTop = wanted;
    this.update();
  }

  // Bring an item to the top (align "start"), the middle ("center") or just into view ("nearest").
  scrollTo(index, align) {
    if (index < 0 || index >= this.count) return;
    for (let round = 0; round < 4; round++) {
      const top = this.offsets[index];
      const bottom = this.offsets[index + 1];
      const view = this.viewport.scrollTop;
      const height = this.viewport.clientHeight;
      if (align === "center") {
        this.viewport.scrollTop = Math.max(0, (top + bottom) / 2 - height / 2);
      } else if (align === "nearest") {
        if (top < view) this.viewport.scrollTop = top;
        else if (bottom > view + height) this.viewport.scrollTop = bottom - height;
      } else {
        this.viewport.scrollTop = top;
      }
      this.update();
      if (Math.abs(this.offsets[index] - top) < 1) break;
    }
  }

  nodeAt(index) {
    return this.nodes.get(index) || null;
  }
};
