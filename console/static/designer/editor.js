// The label designer: one document being edited, its undo history, its live layout from the
// service, and the parts that show and change it (canvas, palette, lists, panels). Every change
// goes through `change()`: a new document, a step of history, a draft kept in the browser, and a
// layout requested; every layout answer repaints the canvas and the panels. Its editing actions
// are in editing.js, saving and drafts in versions.js.

import { ROOT } from "../app.js";
import { h, replace } from "../lib/dom.js";
import { badge, button, errorBox, tabs } from "../lib/ui.js";
import { DesignCanvas } from "./canvas.js";
import { CopilotPanel } from "./copilot.js";
import { DraftKeeper } from "./drafts.js";
import { Editing } from "./editing.js";
import { History } from "./history.js";
import { Interaction } from "./interaction.js";
import { bindKeys, MOD } from "./keyboard.js";
import { LiveLayout } from "./layout.js";
import { FindingList, ObjectList } from "./lists.js";
import * as model from "./model.js";
import { palette } from "./palette.js";
import { FormPreview } from "./preview.js";
import { PropertiesPanel } from "./properties.js";
import { Rulers } from "./rulers.js";
import { toolbar } from "./toolbar.js";
import { dotsToMm, labelDots } from "./units.js";
import { VariablesPanel } from "./variables.js";
import { Versions } from "./versions.js";

const same = (a, b) => a === b || JSON.stringify(a) === JSON.stringify(b);
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
    this.stateBadge = h("span", { class: "dz-state" });
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
    this.selectionText = h("span", { class: "dz-selection-size" });
    this.banner = h("div", { class: "dz-banner", hidden: true });
    const centre = h(
      "div",
      { class: "dz-centre" },
      this.banner,
      h("div", { class: "dz-stage-grid" }, h("div", { class: "dz-ruler-corner", "aria-hidden": "true" }), rulerTop, rulerLeft, this.canvasHost),
      h("footer", { class: "dz-statusbar" }, this.sizeText, this.pointerText, this.selectionText, this.findingsText, this.status),
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
      onActivate: (id) => this.activate(id),
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
    this.showingProblem = true;
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
    if (!this.problem && this.showingProblem) {
      this.showingProblem = false;
      this.setStatus("");
    }
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
    const box = this.selection.size === 1 ? this.layout?.boxes.get([...this.selection][0]) : null;
    const dpi = this.document.dpi;
    this.selectionText.textContent = box ? `${[...this.selection][0]}: ${dotsToMm(box[2] - box[0], dpi)} × ${dotsToMm(box[3] - box[1], dpi)} mm` : "";
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

  /** A double click: edit the object's content (or its first field) in the properties. */
  activate(id) {
    this.select([id]);
    this.sideTabs.select("properties");
    this.properties.form?.ready.then(() => {
      const field = this.properties.form?.input("expression") && model.objectById(this.document, id)?.expression
        ? this.properties.form.input("expression")
        : this.properties.form?.input("content") || this.properties.form?.input("x_mm");
      field?.focus();
      field?.select?.();
    });
  }

  editingKeysHere() {
    const active = document.activeElement;
    return active === this.canvas.focusTarget || this.objectList.list.contains(active);
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
}

// The editing actions (editing.js) and the versions' flow (versions.js) are the Designer's too.
for (const part of [Editing, Versions]) {
  for (const name of Object.getOwnPropertyNames(part.prototype)) {
    if (name !== "constructor") Object.defineProperty(Designer.prototype, name, Object.getOwnPropertyDescriptor(part.prototype, name));
  }
}
