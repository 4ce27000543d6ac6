// Direct manipulation on the canvas: each object is a hit area exactly its box from the layout
// (thin ones get a few pixels more to be grabbed); click and shift-click select, a rubber band
// selects what it touches, dragging moves the selection (snapping to objects and the grid),
// handles resize one object. The outcome of a gesture goes to the page as a change in dots; the
// page changes the document and the service paints the new raster.

import { snap, snapToGrid } from "./snapping.js";

const GRAB_PX = 10; // hit areas are at least this big on screen
const SNAP_PX = 6;
const ACCENT = "#0b62c4";

/** Which handles an object of this kind has: what its size is made of (model.js resize). */
function anchorsFor(obj, item) {
  const turned = obj.rotation === 90 || obj.rotation === 270;
  const sides = turned ? ["top-center", "bottom-center"] : ["middle-left", "middle-right"];
  const ends = turned ? ["middle-left", "middle-right"] : ["top-center", "bottom-center"];
  const corners = ["top-left", "top-right", "bottom-left", "bottom-right"];
  switch (obj.type) {
    case "line":
      return { anchors: sides, keepRatio: false };
    case "barcode":
      if (item && item.bar_height_dots !== null && item.bar_height_dots !== undefined) {
        return { anchors: [...sides, ...ends, ...corners], keepRatio: false };
      }
      return { anchors: corners, keepRatio: true };
    default:
      return { anchors: [...corners, ...sides, ...ends], keepRatio: false };
  }
}

export class Interaction {
  constructor(canvas, handlers) {
    const { Konva } = canvas;
    Konva.dragDistance = 3;
    this.Konva = Konva;
    this.canvas = canvas;
    this.handlers = handlers;
    this.selection = new Set();
    this.snapping = { toGrid: true, toObjects: true };
    this.items = new Map(); // id → layout entry
    this.objects = new Map(); // id → document object
    this.layer = new Konva.Layer();
    canvas.stage.add(this.layer);
    this.outlines = new Konva.Group({ listening: false });
    this.hits = new Konva.Group();
    this.hover = new Konva.Rect({ stroke: ACCENT, strokeWidth: 1, strokeScaleEnabled: false, listening: false, visible: false, dash: [3, 2] });
    this.band = new Konva.Rect({ fill: "rgba(11, 98, 196, 0.08)", stroke: ACCENT, strokeWidth: 1, strokeScaleEnabled: false, visible: false, listening: false });
    this.transformer = new Konva.Transformer({
      rotateEnabled: false,
      flipEnabled: false,
      ignoreStroke: true,
      borderStroke: ACCENT,
      borderStrokeWidth: 1.5,
      anchorStroke: ACCENT,
      anchorFill: "#ffffff",
      anchorSize: 9,
      anchorCornerRadius: 2,
      boundBoxFunc: (old, next) => (next.width < 4 || next.height < 4 ? old : next),
      anchorDragBoundFunc: (old, next) => this.snapAnchor(next),
    });
    this.layer.add(this.outlines, this.hits, this.hover, this.band, this.transformer);
    this.bindStage();
    canvas.on("view", () => this.refreshHitPadding());
  }

  setSnapping(snapping) {
    this.snapping = { ...this.snapping, ...snapping };
  }

  /** The objects as the newest layout placed them. */
  setLayout(layout, document) {
    this.items = layout.byId;
    this.objects = new Map(document.objects.map((obj) => [obj.id, obj]));
    this.hits.destroyChildren();
    for (const item of layout.objects) this.hits.add(this.hitFor(item));
    for (const id of [...this.selection]) if (!this.items.has(id)) this.selection.delete(id);
    this.showSelection();
  }

  hitFor(item) {
    const [l, t, r, b] = item.box;
    const rect = new this.Konva.Rect({
      x: l,
      y: t,
      width: Math.max(1, r - l),
      height: Math.max(1, b - t),
      fill: "rgba(0, 0, 0, 0)",
      draggable: true,
      name: "object",
      hitFunc: (ctx, shape) => {
        const grab = GRAB_PX / this.canvas.scale;
        const padX = Math.max(0, (grab - shape.width()) / 2);
        const padY = Math.max(0, (grab - shape.height()) / 2);
        ctx.beginPath();
        ctx.rect(-padX, -padY, shape.width() + 2 * padX, shape.height() + 2 * padY);
        ctx.closePath();
        ctx.fillStrokeShape(shape);
      },
    });
    rect.objectId = item.id;
    rect.on("pointerdown", (event) => this.onObjectDown(rect, event));
    rect.on("mouseenter", () => this.showHover(rect));
    rect.on("mouseleave", () => this.showHover(null));
    rect.on("dragstart", () => this.onDragStart(rect));
    rect.on("dragmove", () => this.onDragMove(rect));
    rect.on("dragend", () => this.onDragEnd(rect));
    rect.on("transformend", () => this.onTransformEnd(rect));
    rect.on("dblclick dbltap", () => this.handlers.onActivate?.(rect.objectId));
    return rect;
  }

  refreshHitPadding() {
    this.layer.batchDraw();
  }

  rectOf(id) {
    return this.hits.getChildren().find((rect) => rect.objectId === id) || null;
  }

  // --- selection ------------------------------------------------------------------------------

  setSelection(ids) {
    this.selection = new Set(ids);
    this.showSelection();
  }

  showSelection() {
    this.outlines.destroyChildren();
    const chosen = [...this.selection].map((id) => this.rectOf(id)).filter(Boolean);
    if (chosen.length === 1) {
      const obj = this.objects.get(chosen[0].objectId);
      const { anchors, keepRatio } = anchorsFor(obj || {}, this.items.get(chosen[0].objectId));
      this.transformer.setAttrs({ enabledAnchors: anchors, keepRatio });
      this.transformer.nodes(chosen);
    } else {
      this.transformer.nodes([]);
      for (const rect of chosen) {
        this.outlines.add(
          new this.Konva.Rect({ ...rect.getClientRect({ relativeTo: this.layer }), stroke: ACCENT, strokeWidth: 1.5, strokeScaleEnabled: false }),
        );
      }
    }
    this.layer.batchDraw();
  }

  showHover(rect) {
    if (!rect || this.selection.has(rect.objectId)) {
      this.hover.visible(false);
      this.canvas.stage.container().style.cursor = rect ? "move" : "default";
    } else {
      this.hover.setAttrs({ x: rect.x(), y: rect.y(), width: rect.width(), height: rect.height(), visible: true });
      this.canvas.stage.container().style.cursor = "move";
    }
    this.layer.batchDraw();
  }

  onObjectDown(rect, event) {
    const toggle = event.evt.shiftKey || event.evt.ctrlKey || event.evt.metaKey;
    const id = rect.objectId;
    if (toggle) {
      const next = new Set(this.selection);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      rect.draggable(next.has(id));
      this.handlers.onSelect([...next]);
    } else if (!this.selection.has(id)) {
      this.handlers.onSelect([id]);
    }
    event.cancelBubble = true; // not the start of a rubber band
    this.canvas.focusTarget.focus({ preventScroll: true });
  }

  // --- dragging -------------------------------------------------------------------------------

  onDragStart(rect) {
    rect.draggable(true);
    if (!this.selection.has(rect.objectId)) this.handlers.onSelect([rect.objectId]);
    const moving = [...this.selection].map((id) => this.rectOf(id)).filter(Boolean);
    const boxes = moving.map((item) => this.items.get(item.objectId).box);
    const others = [...this.items.values()].filter((item) => !this.selection.has(item.id)).map((item) => item.box);
    this.drag = {
      rect,
      origin: { x: rect.x(), y: rect.y() },
      moving: moving.map((item) => ({ rect: item, x: item.x(), y: item.y() })),
      union: [
        Math.min(...boxes.map((b) => b[0])),
        Math.min(...boxes.map((b) => b[1])),
        Math.max(...boxes.map((b) => b[2])),
        Math.max(...boxes.map((b) => b[3])),
      ],
      others,
      dx: 0,
      dy: 0,
    };
    this.hover.visible(false);
    this.canvas.showGhosts(moving.map((item) => this.items.get(item.objectId).ink).filter(Boolean));
  }

  onDragMove(rect) {
    const drag = this.drag;
    if (!drag || drag.rect !== rect) return;
    const result = snap({
      moving: drag.union,
      dx: rect.x() - drag.origin.x,
      dy: rect.y() - drag.origin.y,
      others: drag.others,
      label: this.canvas.labelSize,
      grid: this.canvas.showGrid ? this.canvas.gridDots : 0,
      threshold: SNAP_PX / this.canvas.scale,
      toObjects: this.snapping.toObjects,
      toGrid: this.snapping.toGrid,
    });
    drag.dx = result.dx;
    drag.dy = result.dy;
    for (const item of drag.moving) item.rect.position({ x: item.x + result.dx, y: item.y + result.dy });
    this.canvas.moveGhosts(result.dx, result.dy);
    this.canvas.setGuides(result.guides);
    this.outlines.destroyChildren();
    this.handlers.onDragging?.(result.dx, result.dy);
  }

  onDragEnd(rect) {
    const drag = this.drag;
    this.drag = null;
    this.canvas.setGuides([]);
    if (!drag || drag.rect !== rect) return;
    if (!drag.dx && !drag.dy) {
      for (const item of drag.moving) item.rect.position({ x: item.x, y: item.y });
      this.canvas.clearGhosts();
      this.showSelection();
      return;
    }
    performance.mark("designer:dragend");
    this.handlers.onMove(
      drag.moving.map((item) => item.rect.objectId),
      drag.dx,
      drag.dy,
    );
  }

  // --- resizing -------------------------------------------------------------------------------

  snapAnchor(position) {
    if (!this.snapping.toGrid || !this.canvas.showGrid) return position;
    const transform = this.layer.getAbsoluteTransform();
    const dot = transform.copy().invert().point(position);
    const grid = this.canvas.gridDots;
    return transform.point({ x: snapToGrid(dot.x, grid), y: snapToGrid(dot.y, grid) });
  }

  onTransformEnd(rect) {
    const width = Math.round(rect.width() * rect.scaleX());
    const height = Math.round(rect.height() * rect.scaleY());
    const left = Math.round(rect.x());
    const top = Math.round(rect.y());
    rect.setAttrs({ scaleX: 1, scaleY: 1, width, height });
    this.handlers.onResize(rect.objectId, [left, top, left + width, top + height]);
  }

  // --- the rubber band --------------------------------------------------------------------------

  bindStage() {
    const stage = this.canvas.stage;
    stage.on("pointerdown", (event) => {
      if (event.target !== stage || event.evt.button !== 0) return;
      const at = stage.getRelativePointerPosition();
      this.rubber = { start: at, additive: event.evt.shiftKey || event.evt.ctrlKey || event.evt.metaKey };
      this.band.setAttrs({ x: at.x, y: at.y, width: 0, height: 0, visible: true });
      this.canvas.focusTarget.focus({ preventScroll: true });
    });
    stage.on("pointermove", () => {
      const at = stage.getRelativePointerPosition();
      if (at) this.handlers.onPointer?.(at.x, at.y);
      if (!this.rubber) return;
      const { start } = this.rubber;
      this.band.setAttrs({
        x: Math.min(start.x, at.x),
        y: Math.min(start.y, at.y),
        width: Math.abs(at.x - start.x),
        height: Math.abs(at.y - start.y),
      });
      this.layer.batchDraw();
    });
    const finish = () => {
      if (!this.rubber) return;
      const { additive } = this.rubber;
      const band = [this.band.x(), this.band.y(), this.band.x() + this.band.width(), this.band.y() + this.band.height()];
      this.rubber = null;
      this.band.visible(false);
      const tiny = (band[2] - band[0]) * this.canvas.scale < 3 && (band[3] - band[1]) * this.canvas.scale < 3;
      const touched = tiny
        ? []
        : [...this.items.values()]
            .filter((item) => item.box[0] < band[2] && item.box[2] > band[0] && item.box[1] < band[3] && item.box[3] > band[1])
            .map((item) => item.id);
      const next = additive ? [...new Set([...this.selection, ...touched])] : touched;
      this.handlers.onSelect(next);
      this.layer.batchDraw();
    };
    stage.on("pointerup", finish);
    stage.on("pointerleave", () => this.handlers.onPointer?.(null, null));
    window.addEventListener("pointerup", finish);
    this.stopWindow = () => window.removeEventListener("pointerup", finish);
  }

  destroy() {
    this.stopWindow?.();
  }
}
