// The designer's canvas: the label at its real size (zoom 100 % = its size in inches on
// screen), the service's print raster painted dot for dot on the paper, a grid in mm under the
// ink, preflight findings drawn at their objects and the guides of a drag. Konva draws it; the
// viewport scrolls a large virtual area and keeps one screen-sized stage (interaction.js adds
// selection, dragging and resizing).

import { h } from "../lib/dom.js";
import { CSS_PX_PER_INCH, dotMm } from "./units.js";

export const ZOOM_MIN = 0.25;
export const ZOOM_MAX = 8;
export const ZOOM_STEPS = [0.25, 0.33, 0.5, 0.67, 0.75, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8];
const MARGIN_PX = 48;
const COLORS = {
  grid: "#dbe4ef",
  gridMajor: "#b9c8da",
  error: "#cf222e",
  warning: "#b07800",
  guide: "#e5007a",
  paperEdge: "#9aa7b8",
};

export class DesignCanvas {
  /** `Konva`: the library; `host`: the element to fill; `labelSize`: [w, h] dots; `dpi`. */
  constructor(Konva, host, { labelSize, dpi, label }) {
    this.Konva = Konva;
    this.labelSize = labelSize;
    this.dpi = dpi;
    this.zoom = 1;
    this.gridMm = 1;
    this.showGrid = true;
    this.listeners = { view: [] };
    this.viewport = h("div", { class: "dz-viewport" });
    this.sizer = h("div", { class: "dz-sizer" });
    this.stageHost = h("div", { class: "dz-stage" });
    this.sizer.append(this.stageHost);
    this.viewport.append(this.sizer);
    host.append(this.viewport);

    this.stage = new Konva.Stage({ container: this.stageHost, width: 10, height: 10 });
    // The stage's own element takes the keyboard: Konva listens for the pointer there.
    const content = this.stage.content;
    content.tabIndex = 0;
    content.setAttribute("role", "application");
    content.setAttribute("aria-roledescription", "label canvas");
    content.setAttribute("aria-label", label);
    content.classList.add("dz-focus");
    this.focusTarget = content;

    this.paperLayer = new Konva.Layer({ listening: false, imageSmoothingEnabled: false });
    this.marksLayer = new Konva.Layer({ listening: false });
    this.stage.add(this.paperLayer, this.marksLayer);
    // A hard shadow: a blurred one costs a software canvas milliseconds on every frame.
    this.shadow = new Konva.Rect({ fill: "rgba(16, 24, 40, 0.18)" });
    this.paper = new Konva.Rect({ x: 0, y: 0, fill: "#ffffff" });
    this.grid = new Konva.Shape({ sceneFunc: (ctx, shape) => this.drawGrid(ctx, shape), listening: false });
    this.raster = new Konva.Image({ x: 0, y: 0 });
    this.overlay = new Konva.Image({ x: 0, y: 0, visible: false });
    this.edge = new Konva.Rect({ x: 0, y: 0, stroke: COLORS.paperEdge, strokeWidth: 1, strokeScaleEnabled: false });
    this.paperLayer.add(this.shadow, this.paper, this.grid, this.raster, this.overlay, this.edge);
    // What a drag lifts off the raster moves on a layer of its own: the label is not drawn again
    // for every pointer move.
    this.ghostLayer = new Konva.Layer({ listening: false, imageSmoothingEnabled: false });
    this.ghosts = new Konva.Group();
    this.ghostLayer.add(this.ghosts);
    this.stage.add(this.ghostLayer);
    this.marksLayer.moveToTop();
    this.findingMarks = new Konva.Group();
    this.guides = new Konva.Group();
    this.marksLayer.add(this.findingMarks, this.guides);
    this.setLabelSize(labelSize, dpi);

    this.viewport.addEventListener("scroll", () => this.place(), { passive: true });
    this.viewport.addEventListener("wheel", (event) => this.onWheel(event), { passive: false });
    this.resizeObserver = new ResizeObserver(() => this.resize());
    this.resizeObserver.observe(this.viewport);
  }

  on(kind, listener) {
    (this.listeners[kind] ||= []).push(listener);
  }

  emit(kind, ...args) {
    for (const listener of this.listeners[kind] || []) listener(...args);
  }

  /** CSS pixels per printer dot at the current zoom. */
  get scale() {
    return (this.zoom * CSS_PX_PER_INCH) / this.dpi;
  }

  setLabelSize(labelSize, dpi) {
    this.labelSize = labelSize;
    this.dpi = dpi;
    const [w, h] = labelSize;
    this.paper.size({ width: w, height: h });
    this.shadow.size({ width: w, height: h });
    this.edge.size({ width: w, height: h });
    this.raster.size({ width: w, height: h });
    this.layoutSizer();
  }

  /** The raster the service answered, painted on the paper: `ink` is its dots on a
   * transparent sheet (layout.js inkOf). */
  setRaster(ink) {
    this.bitmap = ink;
    this.raster.image(ink);
    this.raster.size({ width: ink.width, height: ink.height });
    this.paperLayer.batchDraw();
  }

  /** Something to show instead of the raster (the Copilot's diff), or null for the raster. */
  setOverlay(image) {
    this.overlay.visible(Boolean(image));
    this.raster.visible(!image);
    if (image) this.overlay.setAttrs({ image, width: image.width, height: image.height });
    this.paperLayer.batchDraw();
  }

  // --- zoom and scrolling ------------------------------------------------------------------------

  contentSize() {
    const [w, h] = this.labelSize;
    const s = this.scale;
    const vw = this.viewport.clientWidth || 1;
    const vh = this.viewport.clientHeight || 1;
    const marginX = Math.max(MARGIN_PX, (vw - w * s) / 2);
    const marginY = Math.max(MARGIN_PX, (vh - h * s) / 2);
    return { width: w * s + 2 * marginX, height: h * s + 2 * marginY, marginX, marginY };
  }

  layoutSizer() {
    const size = this.contentSize();
    this.margins = size;
    this.sizer.style.width = `${Math.ceil(size.width)}px`;
    this.sizer.style.height = `${Math.ceil(size.height)}px`;
    this.place();
  }

  resize() {
    const width = this.viewport.clientWidth;
    const height = this.viewport.clientHeight;
    if (!width || !height) return;
    this.stage.size({ width, height });
    this.layoutSizer();
  }

  /** Keep the screen-sized stage over the visible part of the scrolled area. */
  place() {
    const left = this.viewport.scrollLeft;
    const top = this.viewport.scrollTop;
    this.stageHost.style.transform = `translate(${left}px, ${top}px)`;
    const s = this.scale;
    this.stage.scale({ x: s, y: s });
    this.stage.position({ x: this.margins.marginX - left, y: this.margins.marginY - top });
    // Magnified, every dot stays a crisp square; reduced, averaging shows thin lines at all.
    this.paperLayer.imageSmoothingEnabled(s < 1);
    this.ghostLayer.imageSmoothingEnabled(s < 1);
    this.shadow.position({ x: 2 / s, y: 3 / s });
    this.rescaleMarks();
    this.stage.batchDraw();
    this.emit("view", this);
  }

  /** Zoom to `zoom` keeping the dot under the viewport point (px, py) where it is. */
  setZoom(zoom, anchor = null) {
    const next = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, zoom));
    const px = anchor ? anchor[0] : this.viewport.clientWidth / 2;
    const py = anchor ? anchor[1] : this.viewport.clientHeight / 2;
    const [dotX, dotY] = this.dotAt(px, py);
    this.zoom = next;
    this.layoutSizer();
    const s = this.scale;
    this.viewport.scrollLeft = this.margins.marginX + dotX * s - px;
    this.viewport.scrollTop = this.margins.marginY + dotY * s - py;
    this.place();
  }

  zoomBy(direction, anchor = null) {
    const steps = direction > 0 ? ZOOM_STEPS : [...ZOOM_STEPS].reverse();
    const next = steps.find((step) => (direction > 0 ? step > this.zoom + 1e-6 : step < this.zoom - 1e-6));
    if (next) this.setZoom(next, anchor);
  }

  /** The largest zoom at which the whole label shows. */
  fit() {
    const [w, h] = this.labelSize;
    const vw = this.viewport.clientWidth - 2 * MARGIN_PX;
    const vh = this.viewport.clientHeight - 2 * MARGIN_PX;
    const perDot = Math.min(vw / w, vh / h);
    const zoom = Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, (perDot * this.dpi) / CSS_PX_PER_INCH));
    this.zoom = zoom;
    this.layoutSizer();
    this.viewport.scrollLeft = (this.sizer.offsetWidth - this.viewport.clientWidth) / 2;
    this.viewport.scrollTop = (this.sizer.offsetHeight - this.viewport.clientHeight) / 2;
    this.place();
  }

  /** The label dot under a viewport point (CSS px from the viewport's top-left). */
  dotAt(px, py) {
    const s = this.scale;
    return [
      (px + this.viewport.scrollLeft - this.margins.marginX) / s,
      (py + this.viewport.scrollTop - this.margins.marginY) / s,
    ];
  }

  /** Where a label dot is in the viewport (CSS px). */
  pointOf(dotX, dotY) {
    const s = this.scale;
    return [
      this.margins.marginX + dotX * s - this.viewport.scrollLeft,
      this.margins.marginY + dotY * s - this.viewport.scrollTop,
    ];
  }

  /** The label area visible now, in dots: [left, top, right, bottom]. */
  visibleDots() {
    const [l, t] = this.dotAt(0, 0);
    const [r, b] = this.dotAt(this.viewport.clientWidth, this.viewport.clientHeight);
    return [l, t, r, b];
  }

  scrollIntoView(box) {
    const [l, t, r, b] = this.visibleDots();
    if (box[0] >= l && box[2] <= r && box[1] >= t && box[3] <= b) return;
    const s = this.scale;
    const cx = (box[0] + box[2]) / 2;
    const cy = (box[1] + box[3]) / 2;
    this.viewport.scrollLeft = this.margins.marginX + cx * s - this.viewport.clientWidth / 2;
    this.viewport.scrollTop = this.margins.marginY + cy * s - this.viewport.clientHeight / 2;
  }

  onWheel(event) {
    if (!(event.ctrlKey || event.metaKey)) return; // plain wheel scrolls
    event.preventDefault();
    const rect = this.viewport.getBoundingClientRect();
    const factor = Math.exp(-event.deltaY * 0.0025);
    this.setZoom(this.zoom * factor, [event.clientX - rect.left, event.clientY - rect.top]);
  }

  // --- grid, findings and guides -----------------------------------------------------------------

  setGrid(mm, shown) {
    this.gridMm = mm;
    this.showGrid = shown;
    this.paperLayer.batchDraw();
  }

  /** The grid step in dots (0: no grid). */
  get gridDots() {
    return this.gridMm > 0 ? this.gridMm / dotMm(this.dpi) : 0;
  }

  drawGrid(ctx) {
    if (!this.showGrid || !this.gridDots) return;
    const s = this.scale;
    let step = this.gridDots;
    let every = 1;
    while (step * every * s < 6) every *= every === 1 ? 5 : 2; // never denser than 6 px
    const [w, h] = this.labelSize;
    const [vl, vt, vr, vb] = this.visibleDots();
    const major = every * 10;
    step *= every;
    const lineWidth = 1 / s;
    const draw = (color, predicate) => {
      ctx.beginPath();
      for (let i = Math.max(1, Math.ceil(vl / step)); i * step < Math.min(w, vr); i += 1) {
        if (predicate(i * every)) {
          const x = i * step;
          ctx.moveTo(x, Math.max(0, vt));
          ctx.lineTo(x, Math.min(h, vb));
        }
      }
      for (let j = Math.max(1, Math.ceil(vt / step)); j * step < Math.min(h, vb); j += 1) {
        if (predicate(j * every)) {
          const y = j * step;
          ctx.moveTo(Math.max(0, vl), y);
          ctx.lineTo(Math.min(w, vr), y);
        }
      }
      ctx.strokeStyle = color;
      ctx.lineWidth = lineWidth;
      ctx.stroke();
    };
    draw(COLORS.grid, (n) => n % major !== 0);
    draw(COLORS.gridMajor, (n) => n % major === 0);
  }

  /** Findings at their objects: outlined boxes, red for errors, amber for warnings. */
  setFindings(findings, boxes) {
    this.findingMarks.destroyChildren();
    const worst = new Map();
    for (const finding of findings) {
      if (!finding.object_id || !boxes.has(finding.object_id)) continue;
      if (worst.get(finding.object_id) !== "error") worst.set(finding.object_id, finding.severity);
    }
    for (const [id, severity] of worst) {
      const [l, t, r, b] = boxes.get(id);
      const color = severity === "error" ? COLORS.error : COLORS.warning;
      const mark = new this.Konva.Group({ name: `finding finding-${severity}`, id: `finding:${id}` });
      mark.add(
        new this.Konva.Rect({
          x: l,
          y: t,
          width: r - l,
          height: b - t,
          stroke: color,
          strokeWidth: 2,
          dash: [6, 3],
          strokeScaleEnabled: false,
          fill: severity === "error" ? "rgba(207, 34, 46, 0.06)" : "rgba(176, 120, 0, 0.05)",
        }),
      );
      const badge = new this.Konva.Group({ x: r, y: t, scaleX: 1 / this.scale, scaleY: 1 / this.scale });
      badge.add(new this.Konva.Circle({ radius: 8, fill: color, stroke: "#fff", strokeWidth: 1.5 }));
      badge.add(new this.Konva.Text({ text: "!", fontSize: 12, fontStyle: "bold", fill: "#fff", x: -2, y: -6 }));
      mark.add(badge);
      this.findingMarks.add(mark);
    }
    this.marksLayer.batchDraw();
  }

  /** Keep marks (badges) the same size on screen at every zoom. */
  rescaleMarks() {
    for (const badge of this.findingMarks.find("Group")) {
      if (badge.getParent() !== this.findingMarks) badge.scale({ x: 1 / this.scale, y: 1 / this.scale });
    }
  }

  setGuides(guides) {
    this.guides.destroyChildren();
    const [w, h] = this.labelSize;
    for (const guide of guides) {
      const points = guide.axis === "x" ? [guide.at, -h, guide.at, 2 * h] : [-w, guide.at, 2 * w, guide.at];
      this.guides.add(
        new this.Konva.Line({ points, stroke: COLORS.guide, strokeWidth: 1, strokeScaleEnabled: false, dash: [4, 4] }),
      );
    }
    this.marksLayer.batchDraw();
  }

  /** While objects are dragged: their dots from the current raster follow the pointer, the
   * place they left is dimmed, until the new raster arrives. */
  showGhosts(boxes) {
    this.ghosts.destroyChildren();
    if (!this.bitmap) return;
    for (const box of boxes) {
      const [l, t, r, b] = box;
      const crop = {
        x: Math.max(0, l),
        y: Math.max(0, t),
        width: Math.min(r, this.bitmap.width) - Math.max(0, l),
        height: Math.min(b, this.bitmap.height) - Math.max(0, t),
      };
      if (crop.width <= 0 || crop.height <= 0) continue;
      this.ghosts.add(new this.Konva.Rect({ ...crop, fill: "#ffffff", opacity: 0.75 }));
      const ghost = new this.Konva.Image({ image: this.bitmap, crop, ...crop, name: "ghost", opacity: 0.85 });
      ghost.origin = [crop.x, crop.y];
      this.ghosts.add(ghost);
    }
    this.ghostLayer.batchDraw();
  }

  moveGhosts(dx, dy) {
    for (const ghost of this.ghosts.find(".ghost")) ghost.position({ x: ghost.origin[0] + dx, y: ghost.origin[1] + dy });
    this.ghostLayer.batchDraw();
  }

  clearGhosts() {
    if (!this.ghosts.hasChildren()) return;
    this.ghosts.destroyChildren();
    this.ghostLayer.batchDraw();
  }

  /** Resolves once the browser has painted what was drawn (for the drag → paint timing): the
   * frame Konva draws in, then a task, which runs after that frame is painted. */
  painted() {
    return new Promise((resolve) =>
      requestAnimationFrame(() => {
        const channel = new MessageChannel();
        channel.port1.onmessage = () => resolve();
        channel.port2.postMessage(null);
      }),
    );
  }

  destroy() {
    this.resizeObserver.disconnect();
    this.stage.destroy();
  }
}
