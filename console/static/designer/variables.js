// The label's variables: each with its type, sample, default and description, or an
// expression that computes it (checked inline), and the value the current layout gave it. The
// forms are generated from the schema's `Variable`, like the properties panel.

import { h, replace } from "../lib/dom.js";
import { button } from "../lib/ui.js";
import { checkCel } from "./cel.js";
import { SchemaForm, sections } from "./schemaform.js";

function valueText(value) {
  if (value === undefined) return "—";
  if (value === null) return "empty";
  return typeof value === "string" ? value : JSON.stringify(value);
}

export class VariablesPanel {
  /** `onChange(variables, label, key)` with the new list; `context()` as for CEL checks. */
  constructor({ JSONEditor, schema, onChange, context }) {
    this.JSONEditor = JSONEditor;
    this.schema = schema;
    this.onChange = onChange;
    this.context = context;
    this.list = h("div", { class: "dz-variables" });
    this.element = h(
      "section",
      { class: "dz-variables-panel", "aria-label": "Variables" },
      h("p", { class: "muted small" }, "Entered variables get their value from the print form or data; a sample fills the preview. A variable with an expression is computed."),
      this.list,
      button("Add variable", () => this.add(), { class: "secondary" }),
    );
    this.forms = new Map();
    this.open = new Set();
    this.variables = [];
  }

  show(document, layout) {
    const variables = document.variables || [];
    const names = variables.map((v) => v.name).join("|");
    if (names !== this.names) {
      this.rebuild(variables);
      this.names = names;
    } else {
      variables.forEach((variable, index) => this.forms.get(index)?.form.setValue(variable));
    }
    this.variables = variables;
    const values = layout?.values || {};
    variables.forEach((variable, index) => {
      const entry = this.forms.get(index);
      if (entry) entry.value.textContent = valueText(values[variable.name]);
    });
  }

  rebuild(variables) {
    for (const entry of this.forms.values()) {
      entry.stop();
      entry.form.destroy();
    }
    this.forms.clear();
    if (!variables.length) {
      replace(this.list, h("p", { class: "empty" }, "No variables yet: add one, or a variable field from the palette."));
      return;
    }
    replace(
      this.list,
      variables.map((variable, index) => {
        const value = h("span", { class: "dz-variable-value" });
        const body = h("div", { class: "dz-variable-body" });
        const details = h(
          "details",
          { class: "dz-variable", open: this.open.has(variable.name) },
          h(
            "summary",
            h("code", variable.name),
            h("span", { class: "dz-variable-type" }, variable.expression ? `${variable.type}, computed` : variable.type),
            h("span", { class: "visually-hidden" }, " value: "),
            value,
          ),
          body,
        );
        details.addEventListener("toggle", () => {
          if (details.open) this.open.add(variable.name);
          else this.open.delete(variable.name);
        });
        const form = new SchemaForm(this.JSONEditor, body, sections(this.schema, "Variable"), variable, {
          prefix: `var_${index}`,
          headings: false,
          onChange: (changes, removed) => this.edit(index, changes, removed),
        });
        let stopped = false;
        let stopCel = null;
        form.ready.then(() => {
          if (!stopped) stopCel = checkCel(form.element, this.context);
        });
        const stop = () => {
          stopped = true;
          stopCel?.();
        };
        body.append(
          h(
            "div",
            { class: "actions" },
            button(`Remove ${variable.name}`, () => this.remove(index), { class: "danger" }),
          ),
        );
        this.forms.set(index, { form, value, stop });
        return details;
      }),
    );
  }

  /** The service's errors about variables, at their fields. */
  showErrors(errors) {
    for (const [index, entry] of this.forms) {
      const prefix = `/variables/${index}/`;
      entry.form.showErrors(errors, (path) => (path.startsWith(prefix) ? path.slice(prefix.length).split("/")[0] : null));
    }
  }

  edit(index, changes, removed) {
    const variables = this.variables.map((variable, i) => {
      if (i !== index) return variable;
      const next = { ...variable, ...changes };
      for (const key of removed) delete next[key];
      return next;
    });
    if (changes.name) {
      this.open.delete(this.variables[index].name);
      this.open.add(changes.name);
    }
    this.onChange(variables, `Change variable ${this.variables[index].name}`, `variable:${index}:${Object.keys(changes)[0] || removed[0]}`);
  }

  add() {
    const taken = new Set(this.variables.map((v) => v.name));
    let n = this.variables.length + 1;
    while (taken.has(`variable_${n}`)) n += 1;
    const name = `variable_${n}`;
    this.open.add(name);
    this.onChange([...this.variables, { name, type: "string", sample: "Sample", required: false }], `Add variable ${name}`, null);
  }

  remove(index) {
    const name = this.variables[index].name;
    this.onChange(this.variables.filter((_, i) => i !== index), `Remove variable ${name}`, null);
  }
}
