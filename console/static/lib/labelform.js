// A label's print form as inputs: its fields (authored or derived), their values typed as the
// label declares them, and each field's CEL validation checked by postCelEvaluate.

import { post } from "./api.js";
import { h } from "./dom.js";
import { field as labelled, input, select } from "./ui.js";

function control(formField, variable) {
  const attrs = { name: formField.variable, placeholder: formField.placeholder || "" };
  const sample = variable?.default ?? variable?.sample;
  switch (formField.kind) {
    case "textarea":
      return h("textarea", { ...attrs, rows: 3, value: sample ?? "" });
    case "integer":
      return input({ ...attrs, type: "number", step: "1", value: sample ?? "" });
    case "number":
      return input({ ...attrs, type: "number", step: "any", value: sample ?? "" });
    case "date":
      return input({ ...attrs, type: "date", value: typeof sample === "string" ? sample.slice(0, 10) : "" });
    case "checkbox":
      return h("input", { ...attrs, type: "checkbox", checked: Boolean(sample) });
    case "select":
      return select(
        [["", "— choose —"], ...(formField.options || []).map((o) => [JSON.stringify(o.value), o.label])],
        { ...attrs, value: sample !== undefined ? JSON.stringify(sample) : "" },
      );
    default:
      return input({ ...attrs, value: sample ?? "" });
  }
}

function valueOf(formField, el) {
  if (formField.kind === "checkbox") return el.checked;
  const raw = el.value;
  if (raw === "") return undefined;
  if (formField.kind === "integer") return Number.parseInt(raw, 10);
  if (formField.kind === "number") return Number(raw);
  if (formField.kind === "select") {
    try {
      return JSON.parse(raw);
    } catch {
      return raw;
    }
  }
  return raw;
}

/**
 * The form of `labelId`: {el, values(), validate(), fields}. `formDocument` is getLabelForm's
 * document, `labelDocument` the label's (for defaults and samples).
 */
export function labelForm(labelId, formDocument, labelDocument, { onInput } = {}) {
  const variables = Object.fromEntries((labelDocument.variables || []).map((v) => [v.name, v]));
  const entries = (formDocument.fields || []).map((formField) => {
    const el = control(formField, variables[formField.variable]);
    if (formField.required) el.required = true;
    const wrapper = labelled(formField.label, el, {
      help: formField.help,
      hint: formField.required ? "(required)" : null,
    });
    el.addEventListener("input", () => onInput?.());
    el.addEventListener("change", () => onInput?.());
    return { formField, el, wrapper };
  });
  const el = h(
    "div",
    { class: "label-form" },
    entries.length ? entries.map((e) => e.wrapper) : h("p", { class: "muted" }, "This label has no entered variables."),
  );

  const values = () => {
    const out = {};
    for (const { formField, el: input } of entries) {
      const value = valueOf(formField, input);
      if (value !== undefined && !Number.isNaN(value)) out[formField.variable] = value;
    }
    return out;
  };

  /** Required fields and CEL validations; marks each failing field, answers whether all pass. */
  const validate = async () => {
    const current = values();
    let ok = true;
    for (const { formField, el: input, wrapper } of entries) {
      wrapper.setError("");
      const value = current[formField.variable];
      if (formField.required && (value === undefined || value === "")) {
        wrapper.setError("Required.");
        ok = false;
        continue;
      }
      if (!formField.validation || value === undefined) continue;
      try {
        const result = await post("/cel/evaluate", {
          expression: formField.validation,
          variables: { ...current, value },
          types: variables[formField.variable]?.type ? { value: variables[formField.variable].type } : {},
          label_id: labelId,
        });
        if (result.value !== true) {
          wrapper.setError(formField.validation_message || `Not accepted (${formField.validation}).`);
          ok = false;
        }
      } catch (error) {
        wrapper.setError(`The check could not run: ${error.message}`);
        ok = false;
      }
      if (!ok && document.activeElement === document.body) input.focus();
    }
    return ok;
  };

  return { el, values, validate, fields: entries.map((e) => e.formField) };
}
