// The operator's side of the label being designed: its print form as an operator will see it
// (the authored form, or the one a label gets from its entered variables), filled with the
// samples, and the print preview of exactly those values, laid out by the service.

import { get } from "../lib/api.js";
import { h, nextId, replace } from "../lib/dom.js";
import { labelForm } from "../lib/labelform.js";
import { errorBox } from "../lib/ui.js";
import { layOut } from "./layout.js";

const FIELD_KINDS = { string: "text", integer: "integer", number: "number", date: "date", boolean: "checkbox" };

/** The form a label without an authored one gets: a field per entered variable (as the
 * service derives it, domain/label_validation.py derived_form). */
export function derivedForm(document) {
  return {
    fields: (document.variables || [])
      .filter((variable) => !variable.expression)
      .map((variable) => ({
        id: `field_${variable.name}`,
        variable: variable.name,
        label: variable.description || (variable.name.charAt(0).toUpperCase() + variable.name.slice(1)).replace(/_/g, " "),
        kind: FIELD_KINDS[variable.type] || "text",
        required: Boolean(variable.required),
      })),
  };
}

export class FormPreview {
  constructor(labelId) {
    this.labelId = labelId;
    this.authored = null;
    this.formHolder = h("div", { class: "dz-form-preview" });
    this.picture = h("div", { class: "dz-print-preview", "aria-live": "polite" });
    const formId = nextId("opform");
    const printId = nextId("print");
    this.element = h(
      "div",
      { class: "dz-operator" },
      h("section", { "aria-labelledby": formId }, h("h3", { id: formId }, "Print form, as an operator sees it"), this.formHolder),
      h("section", { "aria-labelledby": printId }, h("h3", { id: printId }, "Print preview with these values"), this.picture),
    );
    this.timer = null;
    this.controller = null;
  }

  async load() {
    const answer = await get(`/labels/${encodeURIComponent(this.labelId)}/form`);
    this.authored = answer.version > 0 ? answer.document : null;
  }

  /** Show the form for `document` (the variables as they are now) and preview it. */
  show(document) {
    this.document = document;
    const formDocument = this.authored || derivedForm(document);
    const key = JSON.stringify([formDocument, document.variables]);
    if (key !== this.key) {
      this.key = key;
      this.form = labelForm(this.labelId, formDocument, document, { onInput: () => this.schedule() });
      replace(this.formHolder, this.form.el, this.authored ? h("p", { class: "muted small" }, "This label has an authored form.") : null);
    }
    this.schedule();
  }

  schedule() {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.render(), 250);
  }

  async render() {
    this.controller?.abort();
    this.controller = new AbortController();
    try {
      const variables = this.form.values();
      const result = await layOut(this.document, { variables, signal: this.controller.signal });
      const canvas = result.ink; // a canvas of its own (layOut)
      canvas.className = "raster";
      canvas.setAttribute("role", "img");
      canvas.setAttribute("aria-label", `Print preview: ${result.width_dots} × ${result.height_dots} dots at ${result.dpi} dpi`);
      const errors = result.findings.filter((finding) => finding.severity === "error").length;
      replace(
        this.picture,
        canvas,
        h("p", { class: "muted small" }, `${result.width_dots} × ${result.height_dots} dots at ${result.dpi} dpi — what the printer gets with these values.`),
        errors ? h("p", { class: "warning small" }, `${errors} error finding(s) with these values.`) : null,
      );
    } catch (error) {
      if (error.name !== "AbortError") replace(this.picture, errorBox(error));
    }
  }

  stop() {
    clearTimeout(this.timer);
    this.controller?.abort();
  }
}
