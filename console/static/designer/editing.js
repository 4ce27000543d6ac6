// The designer's editing actions: what the canvas, the palette, the toolbar and the keyboard do
// to the document (each through `change()`, so each is a step of history), mixed into the
// Designer (editor.js).

import { h } from "../lib/dom.js";
import { dialog, notify } from "../lib/ui.js";
import { copied, copyObjects } from "./clipboard.js";
import { chooseImage, imageFromFile } from "./images.js";
import { SHORTCUTS } from "./keyboard.js";
import * as model from "./model.js";
import { newObject } from "./palette.js";
import { dotsToMm, mmToDots } from "./units.js";

// About how much room (mm) a new object of a kind takes: where it fits decides where it goes.
const SIZES = {
  default: [25, 10],
  text: [20, 6],
  textblock: [40, 12],
  box: [30, 15],
  line: [40, 2],
  ellipse: [20, 12],
  image: [30, 20],
  qr: [15, 15],
  datamatrix: [12, 12],
  "gs1-datamatrix": [14, 14],
  pdf417: [45, 12],
  "gs1-128": [70, 18],
  itf14: [70, 20],
  code128: [35, 16],
  code39: [40, 16],
  ean13: [35, 20],
  upca: [35, 20],
};

export class Editing {
  // --- changes from the canvas -----------------------------------------------------------------

  boxes() {
    return this.layout ? this.layout.boxes : new Map();
  }

  moved(ids, dx, dy) {
    const dpi = this.document.dpi;
    this.change(model.moveBy(this.document, ids, dx, dy, this.boxes()), `Move ${ids.length === 1 ? ids[0] : `${ids.length} objects`}`, { immediate: true });
    this.announce(`Moved by ${dotsToMm(dx, dpi)} mm, ${dotsToMm(dy, dpi)} mm`);
  }

  resized(id, box) {
    const was = this.layout?.byId.get(id);
    if (!was) return;
    this.change(model.resize(this.document, id, box, was), `Resize ${id}`, { immediate: true });
  }

  nudge(dx, dy, step) {
    if (!this.selection.size) return;
    const dots = step === "mm" ? mmToDots(1, this.document.dpi) : 1;
    const ids = [...this.selection];
    this.change(model.moveBy(this.document, ids, dx * dots, dy * dots, this.boxes()), "Move with the keyboard", { key: `nudge:${ids.join(",")}` });
    // The next nudge builds on this one before its layout arrives: move the boxes along.
    if (this.layout) {
      for (const id of ids) {
        const box = this.layout.boxes.get(id);
        if (box) this.layout.boxes.set(id, [box[0] + dx * dots, box[1] + dy * dots, box[2] + dx * dots, box[3] + dy * dots]);
      }
    }
  }

  changeLabel(changes) {
    const next = { ...this.document };
    if ("width_mm" in changes || "height_mm" in changes) {
      next.size = { width_mm: changes.width_mm ?? this.document.size.width_mm, height_mm: changes.height_mm ?? this.document.size.height_mm };
    }
    if ("dpi" in changes) next.dpi = Number(changes.dpi);
    this.change(next, "Change the label's size", { key: "label-size", immediate: true });
  }

  /** Where a new object of about `size` mm goes: the first free place on the grid in the part
   * of the label in view (top-left first, in 5 mm steps), else the middle of the view. */
  placeForNew([wMm, hMm] = [20, 8]) {
    const dpi = this.document.dpi;
    const [l, t, r, b] = this.canvas.visibleDots();
    const [labelW, labelH] = this.canvas.labelSize;
    const from = [Math.max(0, l), Math.max(0, t)];
    const to = [Math.min(labelW, r), Math.min(labelH, b)];
    const step = mmToDots(5, dpi);
    const [w, h] = [mmToDots(wMm, dpi), mmToDots(hMm, dpi)];
    const boxes = [...this.boxes().values()];
    const free = (x, y) => boxes.every((box) => x + w <= box[0] || x >= box[2] || y + h <= box[1] || y >= box[3]);
    const first = (value) => Math.ceil(value / step) * step;
    for (let y = first(from[1] + step / 2); y + h <= to[1]; y += step) {
      for (let x = first(from[0] + step / 2); x + w <= to[0]; x += step) {
        if (free(x, y)) return [dotsToMm(x, dpi), dotsToMm(y, dpi)];
      }
    }
    const grid = this.canvas.gridMm || 1;
    const snapMm = (dots) => Math.round(dotsToMm(Math.round(dots), dpi) / grid) * grid;
    return [snapMm((from[0] + to[0]) / 2 - w / 2), snapMm((from[1] + to[1]) / 2 - h / 2)];
  }

  add(kind, options = {}) {
    const [x, y] = this.placeForNew(SIZES[kind === "barcode" ? options.symbology : kind] || SIZES.default);
    let document = this.document;
    const extra = { ...options };
    if (kind === "variable") {
      const entered = (document.variables || []).find((v) => !v.expression);
      let name = entered?.name;
      if (!name) {
        name = "field_1";
        document = { ...document, variables: [...(document.variables || []), { name, type: "string", sample: "Text", required: true, description: "Field 1" }] };
      }
      extra.variable = name;
    }
    if (kind === "counter") extra.counter = this.counters[0] || "serial";
    const [next, id] = model.addObject(document, newObject(kind, x, y, extra));
    this.change(next, `Add ${id}`, { immediate: true, select: [id] });
    this.announce(`Added ${id}`);
    this.canvas.focusTarget.focus({ preventScroll: true });
  }

  async addImage() {
    const file = await chooseImage();
    if (!file) return;
    try {
      const image = await imageFromFile(file, this.document.dpi, this.document.size.width_mm / 2);
      const [x, y] = this.placeForNew([image.width_mm, image.height_mm]);
      const { name, ...fields } = image;
      const [next, id] = model.addObject(this.document, { id: name, type: "image", x_mm: x, y_mm: y, rotation: 0, threshold: 128, ...fields });
      this.change(next, `Add ${id}`, { immediate: true, select: [id] });
    } catch (error) {
      notify(error.message, "error");
    }
  }

  async replaceImage(id) {
    const file = await chooseImage();
    if (!file) return;
    const obj = model.objectById(this.document, id);
    try {
      const image = await imageFromFile(file, this.document.dpi, obj.width_mm);
      this.change(model.updateObject(this.document, id, { content_base64: image.content_base64, dither: image.dither, height_mm: Number(((obj.width_mm * image.height_mm) / image.width_mm).toFixed(2)) }), `Replace the image of ${id}`, { immediate: true });
    } catch (error) {
      notify(error.message, "error");
    }
  }

  // --- actions ---------------------------------------------------------------------------------

  chosen() {
    return [...this.selection];
  }

  toolActions() {
    return {
      undo: () => this.undo(),
      redo: () => this.redo(),
      zoomIn: () => this.canvas.zoomBy(1),
      zoomOut: () => this.canvas.zoomBy(-1),
      zoomTo: (zoom) => this.canvas.setZoom(zoom),
      fit: () => this.canvas.fit(),
      rotate: (clockwise = true) => this.selection.size && this.change(model.rotate(this.document, this.chosen(), this.boxes(), clockwise), "Rotate", { immediate: true }),
      duplicate: () => this.duplicate(),
      remove: () => this.remove(),
      front: () => this.reorder("front"),
      back: () => this.reorder("back"),
      forward: () => this.reorder("forward"),
      backward: () => this.reorder("backward"),
      align: (edge) => this.selection.size && this.change(model.align(this.document, this.chosen(), this.boxes(), edge, this.canvas.labelSize), `Align ${edge}`, { immediate: true }),
      distribute: (axis) => this.selection.size >= 3 && this.change(model.distribute(this.document, this.chosen(), this.boxes(), axis), `Distribute ${axis}ly`, { immediate: true }),
      grid: (shown, mm, toObjects) => {
        this.canvas.setGrid(mm, shown);
        this.interaction.setSnapping({ toGrid: shown, toObjects });
      },
    };
  }

  keyActions() {
    return {
      ...this.toolActions(),
      save: () => this.save(),
      nudge: (dx, dy, step) => this.nudge(dx, dy, step),
      copy: () => this.copy(),
      cut: () => {
        if (this.copy()) this.remove();
      },
      paste: () => this.paste(),
      selectAll: () => this.select(this.document.objects.map((obj) => obj.id)),
      selectNone: () => this.select([]),
      help: () => this.help(),
    };
  }

  undo() {
    const document = this.history.undo();
    if (document) this.show(document, { immediate: true });
  }

  redo() {
    const document = this.history.redo();
    if (document) this.show(document, { immediate: true });
  }

  duplicate() {
    if (!this.selection.size) return;
    const offset = mmToDots(2, this.document.dpi);
    const objects = this.document.objects.filter((obj) => this.selection.has(obj.id));
    const [next, ids] = model.addCopies(this.document, objects, offset, offset, this.boxes());
    this.change(next, "Duplicate", { immediate: true, select: ids });
  }

  remove() {
    if (!this.selection.size) return;
    const ids = this.chosen();
    this.change(model.removeObjects(this.document, ids), `Delete ${ids.length === 1 ? ids[0] : `${ids.length} objects`}`, { immediate: true, select: [] });
    this.announce(`Deleted ${ids.join(", ")}`);
  }

  reorder(where) {
    if (!this.selection.size) return;
    this.change(model.reorder(this.document, this.chosen(), where), { front: "Bring to front", back: "Send to back", forward: "Bring forward", backward: "Send backward" }[where], { immediate: true });
  }

  copy() {
    const count = copyObjects(this.document, this.chosen());
    if (count) this.announce(`Copied ${count} object${count === 1 ? "" : "s"}`);
    return count;
  }

  paste() {
    const payload = copied();
    if (!payload) {
      notify("Nothing to paste: copy objects first.");
      return;
    }
    const present = new Set(this.document.objects.map((obj) => obj.id));
    const clash = payload.objects.some((obj) => present.has(obj.id));
    const offset = clash ? mmToDots(2, this.document.dpi) : 0;
    const withVariables = model.withVariables(this.document, payload.variables || []);
    const [next, ids] = model.addCopies(withVariables, payload.objects, offset, offset);
    this.change(next, `Paste ${ids.length} object${ids.length === 1 ? "" : "s"}`, { immediate: true, select: ids });
  }

  announce(text) {
    this.setStatus(text);
  }

  help() {
    dialog(
      "Keyboard shortcuts",
      h(
        "table",
        { class: "dz-shortcuts" },
        h("caption", { class: "visually-hidden" }, "Keyboard shortcuts of the designer"),
        h("thead", h("tr", h("th", { scope: "col" }, "Keys"), h("th", { scope: "col" }, "What they do"))),
        h("tbody", SHORTCUTS.map(([keys, what]) => h("tr", h("td", h("kbd", keys)), h("td", what)))),
      ),
    );
  }
}
