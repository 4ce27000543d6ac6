// The label designer: one document being edited, its undo history, its live layout from the
// service, and the parts that show and change it (canvas, palette, lists, panels). Every change
// goes through `change()`: a new document, a step of history, a draft kept in the browser, and a
// layout requested; every layout answer repaints the canvas and the panels.

import { navigate, ROOT } from "../app.js";
import { get } from "../lib/api.js";
import { h, replace } from "../lib/dom.js";
import { ago } from "../lib/format.js";
import { badge, button, dialog, errorBox, notify, tabs } from "../lib/ui.js";
import { DesignCanvas } from "./canvas.js";
import { copied, copyObjects } from "./clipboard.js";
import { CopilotPanel } from "./copilot.js";
import { DraftKeeper, dropDraft, readDraft } from "./drafts.js";
import { chooseImage, imageFromFile } from "./images.js";
import { History } from "./history.js";
import { Interaction } from "./interaction.js";
import { bindKeys, MOD, SHORTCUTS } from "./keyboard.js";
import { LiveLayout } from "./layout.js";
import { FindingList, ObjectList } from "./lists.js";
import * as model from "./model.js";
import { newObject, palette } from "./palette.js";
import { FormPreview } from "./preview.js";
import { PropertiesPanel } from "./properties.js";
import { Rulers } from "./rulers.js";
import { askComment, isConflict, resolveConflict, saveVersion } from "./saving.js";
import { toolbar } from "./toolbar.js";
import { dotsToMm, labelDots, mmToDots } from "./units.js";
import { VariablesPanel } from "./variables.js";

const same = (a, b) => a === b || JSON.stringify(a) === JSON.stringify(b);
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

export class Designer {
  /** `label`: getLabel; `saved`: getLabelDocument; `schema`: getSchema label. */
  constructor({ main, label, saved, schema, Konva, JSONEditor, counters }) {
    this.main = main;
    this.label = label;
    this.labelId = label.id;
    this.schema = schema;
    this.counters = counters;
    this.baseVersion = saved.version;
    this.base = saved.document;
    this.document = saved.document;
    this.history = new History(this.document);
    this.selection = new Set();
    this.layout = null;
    this.problem = null;
    this.drafts = new DraftKeeper(this.labelId, () => this.setStatus("This browser has no room to keep unsaved changes: save them."));
    const symbology = schema.$defs.BarcodeObject.properties.symbology;
    this.symbologies = symbology.enum;
    this.symbologyTitles = Object.fromEntries(symbology.enum.map((s, i) => [s, symbology["x-enum-titles"]?.[i] || s]));
    this.build(Konva, JSONEditor);
  }

  // --- building the screen -------------------------------------------------------------------

  build(Konva, JSONEditor) {
    this.saveButton = button("Save", () => this.save(), { class: "primary", title: `Save as a new version (${MOD}+S)` });
    this.stateBadge = h("span", { class: "dz-state", role: "status" });
    this.heading = h("h1", { tabindex: "-1", class: "dz-title" }, this.label.name);
    const header = h(
      "header",
      { class: "dz-header" },
      h(
        "nav",
        { class: "crumbs", "aria-label": "Breadcrumb" },
        h("ol", h("li", h("a", { href: `${ROOT}/labels` }, "Labels")), h("li", h("a", { href: `${ROOT}/labels/${this.labelId}` }, this.label.name))),
      ),
      h("div", { class: "dz-title-row" }, this.heading, this.stateBadge),
      h(
        "div",
        { class: "dz-header-actions" },
        button("Shortcuts", () => this.help(), { class: "secondary", title: "Keyboard shortcuts (?)" }),
        this.saveButton,
      ),
    );
    this.tools = toolbar(this.toolActions(), MOD);

    this.canvasHost = h("div", { class: "dz-canvas-host" });
    const rulerTop = h("div", { class: "dz-ruler-holder top" });
    const rulerLeft = h("div", { class: "dz-ruler-holder left" });
    this.status = h("span", { class: "dz-status-text", "aria-live": "polite" });
    this.pointerText = h("span", { class: "dz-pointer" });
    this.sizeText = h("span", { class: "dz-size" });
    this.findingsText = h("span", { class: "dz-findings-count" });
    this.banner = h("div", { class: "dz-banner", hidden: true });
    const centre = h(
      "div",
      { class: "dz-centre" },
      this.banner,
      h("div", { class: "dz-stage-grid" }, h("div", { class: "dz-ruler-corner", "aria-hidden": "true" }), rulerTop, rulerLeft, this.canvasHost),
      h("footer", { class: "dz-statusbar" }, this.sizeText, this.pointerText, this.findingsText, this.status),
    );

    this.objectList = new ObjectList({
      titles: this.symbologyTitles,
      onSelect: (id, additive) => this.select(additive ? this.toggled(id) : [id], { reveal: true }),
      onActivate: () => this.sideTabs.select("properties"),
    });
    this.findingList = new FindingList({ onSelect: (id) => this.select([id], { reveal: true }) });
    const context = () => this.celContext();
    this.properties = new PropertiesPanel({
      JSONEditor,
      schema: this.schema,
      context,
      onObjectChange: (id, changes, removed, field) =>
        this.change(model.updateObject(this.document, id, changes, removed), `Change ${field} of ${id}`, { key: `field:${id}:${field}` }),
      onLabelChange: (changes) => this.changeLabel(changes),
      onReplaceImage: (id) => this.replaceImage(id),
    });
    this.variables = new VariablesPanel({
      JSONEditor,
      schema: this.schema,
      context,
      onChange: (variables, label, key) => this.change({ ...this.document, variables }, label, { key }),
    });
    this.formPreview = new FormPreview(this.labelId);
    this.copilot = new CopilotPanel(this);

    const left = h(
      "aside",
      { class: "dz-left", "aria-label": "Palette and objects" },
      palette({
        symbologies: this.symbologies,
        titles: this.symbologies.map((s) => this.symbologyTitles[s]),
        onAdd: (kind, options) => this.add(kind, options),
        onImage: () => this.addImage(),
      }),
      this.objectList.element,
    );
    this.sideTabs = tabs(
      [
        { id: "properties", label: "Properties", render: (panel) => panel.append(this.properties.element) },
        { id: "variables", label: "Variables", render: (panel) => panel.append(this.variables.element) },
        { id: "findings", label: "Findings", render: (panel) => panel.append(this.findingList.element) },
        {
          id: "operator",
          label: "Form & print",
          render: (panel) => {
            panel.append(this.formPreview.element);
            this.formPreview.load().then(() => this.formPreview.show(this.document), (error) => panel.append(errorBox(error)));
          },
        },
        { id: "copilot", label: "Copilot", render: (panel) => panel.append(this.copilot.element) },
      ],
      {
        label: "Designer panels",
        onChange: (id) => {
          this.sideTab = id;
          if (this.canvas) this.refreshPanel();
        },
      },
    );
    const right = h("aside", { class: "dz-right", "aria-label": "Panels" }, this.sideTabs);
    this.root = h("div", { class: "dz" }, header, this.tools.element, h("div", { class: "dz-body" }, left, centre, right));
    this.main.append(this.root);

    const [w, hgt] = labelDots(this.document);
    this.canvas = new DesignCanvas(Konva, this.canvasHost, {
      labelSize: [w, hgt],
      dpi: this.document.dpi,
      label: `Label canvas, ${this.document.size.width_mm} × ${this.document.size.height_mm} mm at ${this.document.dpi} dpi. Arrow keys move the selection, Delete removes it; the object list beside it selects.`,
    });
    this.rulers = new Rulers(this.canvas, rulerTop, rulerLeft);
    this.interaction = new Interaction(this.canvas, {
      onSelect: (ids) => this.select(ids),
      onMove: (ids, dx, dy) => this.moved(ids, dx, dy),
      onResize: (id, box) => this.resized(id, box),
      onPointer: (x, y) => this.pointerAt(x, y),
    });
    this.canvas.on("view", () => this.refreshTools());
    this.live = new LiveLayout({
      onResult: (layout, document) => this.laidOut(layout, document),
      onProblem: (error, document) => this.refused(error, document),
      onBusy: (busy) => this.root.classList.toggle("dz-busy", busy),
    });
    this.stopKeys = bindKeys(this.root, this.keyActions(), () => this.editingKeysHere());
    // Unsaved work is kept in the browser, so leaving asks nothing: the draft is written now.
    this.onLeave = () => this.drafts.flush();
    window.addEventListener("beforeunload", this.onLeave);
  }

  async start() {
    await this.restoreDraft();
    this.canvas.resize();
    this.canvas.fit();
    this.live.request(this.document, { immediate: true });
    this.refresh();
  }

  // --- state ---------------------------------------------------------------------------------

  get dirty() {
    // Asked several times per change; a document with pictures is megabytes of JSON.
    if (this.dirtyOf?.[0] !== this.document || this.dirtyOf[1] !== this.base) {
      this.dirtyOf = [this.document, this.base, !same(this.document, this.base)];
    }
    return this.dirtyOf[2];
  }

  state() {
    return { document: this.document, baseVersion: this.baseVersion, dirty: this.dirty, layout: this.layout };
  }

  celContext() {
    const types = Object.fromEntries((this.document.variables || []).map((v) => [v.name, v.type]));
    const values = Object.fromEntries(Object.entries(this.layout?.values || {}).filter(([, v]) => v !== null));
    return { types, values };
  }

  /** The one way the document changes: history, draft, layout, panels. */
  change(next, label, { key = null, immediate = false, select } = {}) {
    if (next === this.document) return;
    this.history.push(next, label, key);
    this.show(next, { immediate, select });
  }

  show(next, { immediate = false, select } = {}) {
    const sizeChanged = !same(next.size, this.document.size) || next.dpi !== this.document.dpi;
    this.document = next;
    if (select) this.selection = new Set(select);
    for (const id of [...this.selection]) if (!model.objectById(next, id)) this.selection.delete(id);
    if (sizeChanged) this.canvas.setLabelSize(labelDots(next), next.dpi);
    this.drafts.keep(this.baseVersion, next, this.dirty);
    this.live.request(next, { immediate });
    this.refresh();
  }

  laidOut(layout, document) {
    this.layout = layout;
    if (this.problem) {
      this.properties.showErrors([], document);
      this.variables.showErrors([]);
    }
    this.problem = null;
    this.canvas.setRaster(layout.ink);
    this.canvas.clearGhosts();
    this.canvas.setFindings(layout.findings, layout.boxes);
    this.interaction.setLayout(layout, document);
    this.interaction.setSelection([...this.selection]);
    this.canvas.painted().then(() => {
      if (performance.getEntriesByName("designer:dragend").length) {
        performance.measure("designer:drag-to-paint", "designer:dragend");
        performance.measure("designer:answer-to-paint", "designer:answer");
        performance.clearMarks("designer:dragend");
      }
      this.root.dataset.painted = String(Number(this.root.dataset.painted || 0) + 1);
    });
    this.findingList.render(layout.findings);
    this.sideTabs.querySelectorAll("[role=tab]")[2].textContent = layout.findings.length ? `Findings (${layout.findings.length})` : "Findings";
    this.refresh();
  }

  refused(error, document) {
    if (document !== this.document) return;
    this.problem = error;
    const errors = error.code === "document.invalid" ? error.params.errors || [] : [];
    this.properties.showErrors(errors, document);
    this.variables.showErrors(errors);
    this.canvas.clearGhosts();
    if (this.layout) this.interaction.setLayout(this.layout, this.document);
    this.setStatus(`Not laid out: ${error.message}`);
    this.refresh();
  }

  refresh() {
    this.objectList.render(this.document, this.layout, this.selection, this.layout?.findings);
    this.refreshPanel();
    const dirty = this.dirty;
    replace(
      this.stateBadge,
      badge(this.label.status),
      ` v${this.baseVersion}`,
      dirty ? h("span", { class: "dz-unsaved" }, " · unsaved changes, kept in this browser") : h("span", { class: "muted" }, " · saved"),
    );
    this.saveButton.toggleAttribute("aria-disabled", !dirty);
    const { size, dpi } = this.document;
    this.sizeText.textContent = `${size.width_mm} × ${size.height_mm} mm · ${dpi} dpi · ${labelDots(this.document).join(" × ")} dots`;
    const findings = this.layout?.findings || [];
    const errors = findings.filter((f) => f.severity === "error").length;
    const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
    this.findingsText.textContent = findings.length ? `${count(errors, "error")}, ${count(findings.length - errors, "warning")}` : "no findings";
    this.findingsText.className = `dz-findings-count ${errors ? "bad" : findings.length ? "warn" : "ok"}`;
    if (!this.problem) this.setStatus("");
    this.refreshTools();
  }

  /** The panel in view follows the document; the others catch up when they are shown. */
  refreshPanel() {
    const tab = this.sideTab || "properties";
    if (tab === "properties") this.properties.show(this.document, this.selection, this.layout);
    else if (tab === "variables") this.variables.show(this.document, this.layout);
    else if (tab === "operator" && this.formPreview.form) this.formPreview.show(this.document);
  }

  refreshTools() {
    this.tools.update({
      canUndo: this.history.canUndo,
      canRedo: this.history.canRedo,
      undoLabel: this.history.undoLabel,
      redoLabel: this.history.redoLabel,
      selected: this.selection.size,
      zoom: this.canvas?.zoom || 1,
    });
  }

  setStatus(text) {
    this.status.textContent = text;
  }

  pointerAt(x, y) {
    this.rulers.mark(x, y);
    if (x === null) this.pointerText.textContent = "";
    else this.pointerText.textContent = `x ${dotsToMm(Math.round(x), this.document.dpi)} mm, y ${dotsToMm(Math.round(y), this.document.dpi)} mm`;
  }

  // --- selection -----------------------------------------------------------------------------

  toggled(id) {
    const next = new Set(this.selection);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    return [...next];
  }

  select(ids, { reveal = false } = {}) {
    this.selection = new Set(ids);
    this.interaction.setSelection(ids);
    if (reveal && ids.length === 1 && this.layout?.boxes.has(ids[0])) this.canvas.scrollIntoView(this.layout.boxes.get(ids[0]));
    this.refresh();
  }

  editingKeysHere() {
    const active = document.activeElement;
    return active === this.canvas.focusTarget || this.objectList.list.contains(active);
  }

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

  // --- saving, drafts, conflicts ----------------------------------------------------------------

  async restoreDraft() {
    const draft = readDraft(this.labelId);
    if (!draft || same(draft.document, this.base) || draft.base_version > this.baseVersion) {
      if (draft) dropDraft(this.labelId);
      return;
    }
    const newer = draft.base_version < this.baseVersion;
    if (newer) {
      // The changes are against the version they started from: that is the base of a save.
      const started = await get(`/labels/${encodeURIComponent(this.labelId)}/versions/${draft.base_version}`);
      this.base = started.document;
      this.baseVersion = draft.base_version;
    }
    this.document = draft.document;
    this.history.push(draft.document, "Unsaved changes from this browser");
    this.showBanner(
      newer
        ? `Your unsaved changes (${ago(draft.saved_at)}) are back. They started from version ${draft.base_version}; version ${this.baseVersion} was saved since — saving will ask how to combine them.`
        : `Your unsaved changes (${ago(draft.saved_at)}) are back.`,
      [button("Discard them", () => this.discardDraft())],
    );
  }

  discardDraft() {
    dropDraft(this.labelId);
    this.hideBanner();
    this.reload();
  }

  async reload(version) {
    const saved = await get(`/labels/${encodeURIComponent(this.labelId)}/document`, { version });
    this.label = await get(`/labels/${encodeURIComponent(this.labelId)}`);
    this.baseVersion = saved.version;
    this.base = saved.document;
    this.history.reset(saved.document);
    this.show(saved.document, { immediate: true, select: [] });
  }

  showBanner(text, actions = []) {
    replace(this.banner, h("p", text), h("div", { class: "actions" }, actions));
    this.banner.hidden = false;
  }

  hideBanner() {
    this.banner.hidden = true;
    replace(this.banner);
  }

  async save() {
    if (!this.dirty) {
      notify("Nothing to save: the label is as saved.");
      return;
    }
    const comment = await askComment(Math.max(this.label.latest_version, this.baseVersion) + 1);
    if (comment === null) return;
    const document = this.document;
    try {
      const saved = await saveVersion(this.labelId, this.base, document, this.baseVersion, comment);
      this.saved(saved, document);
      notify(`Saved as version ${saved.version}.`);
    } catch (error) {
      if (!isConflict(error)) throw error;
      await this.conflict(document);
    }
  }

  async conflict(document) {
    const outcome = await resolveConflict(this.labelId, this.base, document, this.baseVersion);
    if (outcome.action === "theirs") {
      dropDraft(this.labelId);
      this.hideBanner();
      await this.reload(outcome.version);
      notify(`Version ${outcome.version} is open; your changes were discarded.`);
    } else if (outcome.action === "merged") {
      this.baseVersion = outcome.version;
      this.label = { ...this.label, latest_version: Math.max(this.label.latest_version, outcome.version) };
      this.base = outcome.theirs;
      this.hideBanner();
      this.change(outcome.document, `Apply my changes to version ${outcome.version}`, { immediate: true });
      const note = outcome.conflicts.length ? ` Changed on both sides: ${outcome.conflicts.join("; ")}.` : "";
      this.showBanner(`Your changes are applied to version ${outcome.version}; check them and save.${note}`, [button("Save", () => this.save(), { class: "primary" })]);
    }
  }

  saved(answer, document) {
    this.baseVersion = answer.version;
    this.base = answer.document;
    this.label = { ...this.label, latest_version: answer.version };
    this.hideBanner();
    dropDraft(this.labelId);
    // The service's document (its defaults written out) replaces the one saved, unless the
    // designer changed it again meanwhile.
    if (this.document === document) {
      this.history.push(answer.document, "Save");
      this.document = answer.document;
    }
    this.drafts.keep(this.baseVersion, this.document, this.dirty);
    this.refresh();
  }

  /** A version the Copilot's proposal was saved as. */
  accepted(answer) {
    this.saved(answer, this.document);
    this.show(answer.document, { immediate: true });
    notify(`The proposal is saved as version ${answer.version}.`);
  }

  showProposal(diffCanvas) {
    this.canvas.setOverlay(diffCanvas);
    this.showBanner("Showing the Copilot's proposal: red dots go, blue dots come. Accept or reject it in the Copilot panel.", []);
  }

  hideProposal() {
    this.canvas.setOverlay(null);
    this.hideBanner();
  }

  leave() {
    this.drafts.flush();
    this.live.stop();
    this.formPreview.stop();
    this.stopKeys();
    this.interaction.destroy();
    this.canvas.destroy();
    window.removeEventListener("beforeunload", this.onLeave);
  }

  goToLabel() {
    navigate(`${ROOT}/labels/${this.labelId}`);
  }
}
