// The properties panel: the selected object's fields as forms generated from the label schema
// (schemaform.js), its CEL checked inline (cel.js), GS1 data with its assistant (gs1.js), an
// image with its picture and upload; with nothing selected, the label's own size and density.

import { h, replace } from "../lib/dom.js";
import { button } from "../lib/ui.js";
import { checkCel } from "./cel.js";
import { gs1Assistant } from "./gs1.js";
import { SchemaForm, sections } from "./schemaform.js";

const DEFINITIONS = {
  text: "TextObject",
  barcode: "BarcodeObject",
  box: "BoxObject",
  line: "LineObject",
  ellipse: "EllipseObject",
  image: "ImageObject",
};
const GS1 = new Set(["gs1-128", "gs1-datamatrix"]);
// Pairs of fields only one of which may be given: entering one clears the other.
const EITHER = [
  ["content", "expression"],
  ["module_width_mm", "module_width_dots"],
  ["height_mm", "height_dots"],
];

export class PropertiesPanel {
  /**
   * `schema`: the published label schema. `onObjectChange(id, changes, removed, field)`,
   * `onLabelChange(changes)`, `onReplaceImage(id)`; `context()` answers {types, values} for CEL.
   */
  constructor({ JSONEditor, schema, onObjectChange, onLabelChange, onReplaceImage, context }) {
    this.JSONEditor = JSONEditor;
    this.schema = schema;
    this.onObjectChange = onObjectChange;
    this.onLabelChange = onLabelChange;
    this.onReplaceImage = onReplaceImage;
    this.context = context;
    this.body = h("div", { class: "dz-properties-body" });
    this.heading = h("h2", { class: "dz-panel-title" }, "Properties");
    this.element = h("section", { class: "dz-properties", "aria-label": "Properties" }, this.heading, this.body);
    this.form = null;
    this.shownKey = null;
    this.stopChecks = null;
    this.helpers = [];
  }

  /** Show what is selected in `document` (rebuilt only when the selection or its kind changes). */
  show(document, selection, layout) {
    const ids = [...selection];
    const obj = ids.length === 1 ? document.objects.find((o) => o.id === ids[0]) : null;
    const key = obj ? `${obj.id}|${obj.type}|${obj.symbology || ""}|${document.dpi}` : ids.length ? `many|${ids.join(",")}` : `label|${document.dpi}`;
    if (key !== this.shownKey) {
      this.clear();
      this.shownKey = key;
      if (obj) this.showObject(obj, document);
      else if (ids.length) this.showMany(ids);
      else this.showLabel(document);
    } else if (obj) {
      this.form?.setValue(obj);
    } else if (!ids.length) {
      this.form?.setValue({ ...document.size, dpi: document.dpi });
    }
    this.current = obj;
    this.layout = layout;
    for (const helper of this.helpers) helper.refresh?.();
  }

  /** The service's errors of the document (document.invalid) at the fields they are about. */
  showErrors(errors, document) {
    if (!this.form) return;
    if (this.current) {
      const prefix = `/objects/${document.objects.findIndex((o) => o.id === this.current.id)}/`;
      this.form.showErrors(errors, (path) => (path.startsWith(prefix) ? path.slice(prefix.length).split("/")[0] : null));
    } else if (this.shownKey?.startsWith("label")) {
      this.form.showErrors(errors, (path) => (path.startsWith("/size/") ? path.slice(6) : path === "/dpi" ? "dpi" : null));
    }
  }

  clear() {
    this.stopChecks?.();
    this.stopChecks = null;
    this.form?.destroy();
    this.form = null;
    this.helpers = [];
    replace(this.body);
  }

  showObject(obj, document) {
    const typeName = DEFINITIONS[obj.type];
    this.heading.textContent = `${this.schema.$defs[typeName]?.title || obj.type} · ${obj.id}`;
    const list = sections(this.schema, typeName, { dpi: document.dpi });
    this.form = new SchemaForm(this.JSONEditor, this.body, list, obj, {
      prefix: `obj_${obj.id}`,
      onChange: (changes, removed) => {
        const cleared = [...removed];
        for (const pair of EITHER) {
          const [a, b] = pair;
          if (a in changes && !(b in changes)) cleared.push(b);
          if (b in changes && !(a in changes)) cleared.push(a);
        }
        const field = Object.keys(changes)[0] || removed[0];
        this.onObjectChange(obj.id, changes, [...new Set(cleared)], field);
      },
    });
    const form = this.form;
    form.ready.then(() => {
      if (this.form !== form) return; // another selection meanwhile
      this.stopChecks = checkCel(form.element, this.context);
      if (obj.type === "barcode" && GS1.has(obj.symbology)) this.addGs1(obj.id);
      if (obj.type === "image") this.addImage(obj);
    });
  }

  addGs1(id) {
    const assistant = gs1Assistant({
      read: () => (this.current?.expression ? null : this.current?.content ?? ""),
      shown: () => this.layout?.byId.get(id)?.text ?? null,
      write: (text) => this.onObjectChange(id, { content: text }, ["expression"], "content"),
    });
    const content = this.form.element.querySelector("[data-schemapath$='.content']");
    (content?.closest(".dz-form-section") || this.form.element).append(assistant);
    assistant.refresh();
    this.helpers.push(assistant);
  }

  addImage(obj) {
    const picture = h("img", {
      class: "dz-image-source",
      alt: `The picture of ${obj.id} as uploaded (the canvas shows its printed dots)`,
      src: `data:${obj.content_base64.startsWith("/9j/") ? "image/jpeg" : "image/png"};base64,${obj.content_base64}`,
    });
    const section = this.form.element.querySelector(".dz-form-section:last-child") || this.form.element;
    section.append(h("div", { class: "dz-image-row" }, picture, button("Replace image…", () => this.onReplaceImage(obj.id))));
  }

  showMany(ids) {
    this.heading.textContent = `${ids.length} objects`;
    this.body.append(
      h("p", { class: "muted" }, `${ids.length} objects are selected: move them together, align or distribute them with the toolbar, or select one to edit its fields.`),
      h("ul", { class: "dz-many" }, ids.map((id) => h("li", h("code", id)))),
    );
  }

  showLabel(document) {
    this.heading.textContent = "Label";
    const size = sections(this.schema, "Size", { dpi: document.dpi });
    const density = sections(this.schema, "LabelDocument", { dpi: document.dpi, only: ["dpi"] });
    const list = [{ group: "Size and density", schema: { ...size[0].schema, properties: { ...size[0].schema.properties, ...density[0].schema.properties } } }];
    this.form = new SchemaForm(this.JSONEditor, this.body, list, { ...document.size, dpi: document.dpi }, {
      prefix: "label",
      onChange: (changes) => this.onLabelChange(changes),
    });
    this.body.append(h("p", { class: "muted small" }, "Select an object on the canvas or in the object list to edit it. Changing the density keeps every position in mm."));
  }
}
