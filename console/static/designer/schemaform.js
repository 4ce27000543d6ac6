// Property forms generated from the service's published JSON Schema (getSchema) by json-editor:
// no form is written by hand per object type. The schema's annotations decide how a field shows:
// `x-group` its section, `x-unit` its unit, `x-enum-titles` the names of its choices, `x-cel` an
// expression field (checked inline, cel.js). json-editor draws under the console's CSP through a
// theme of ours: its own would write inline style attributes, which the CSP refuses.

import { h, nextId } from "../lib/dom.js";
import { vendor } from "../lib/vendor.js";
import { dotMm } from "./units.js";

const UNIT_WORDS = { degrees: "°", dpi: "dpi", dots: "dots", mm: "mm", pt: "pt" };
// Fields the designer shows its own way: the id in the section heading, the type never, an
// image's data as a picture with its upload button.
const OWN_WAY = new Set(["id", "type", "content_base64"]);

let kit = null;

/** json-editor with the console's theme registered (loaded once). */
export function jsonEditor() {
  if (!kit) {
    kit = vendor("json-editor").then((JSONEditor) => {
      const Html = JSONEditor.defaults.themes.html;
      class ConsoleTheme extends Html {
        getHiddenLabel(text) {
          const label = document.createElement("label");
          label.textContent = text;
          label.classList.add("visually-hidden");
          return label;
        }
        visuallyHidden(element) {
          element?.classList.add("visually-hidden");
        }
        getHiddenText(text) {
          const span = document.createElement("span");
          span.textContent = text;
          span.classList.add("visually-hidden");
          return span;
        }
        getOptInCheckbox(formName) {
          const holder = document.createElement("span");
          const label = this.getHiddenLabel(`${formName} opt-in`);
          label.setAttribute("for", `${formName}-opt-in`);
          const box = document.createElement("input");
          box.setAttribute("type", "checkbox");
          box.setAttribute("id", `${formName}-opt-in`);
          box.classList.add("json-editor-opt-in");
          holder.append(box, label);
          return { label, checkbox: box, container: holder };
        }
        setGridColumnSize(element, size) {
          element.classList.add(`je-col-${size}`);
        }
      }
      JSONEditor.defaults.themes.console = ConsoleTheme;
      return JSONEditor;
    });
  }
  return kit;
}

function resolve(root, node) {
  let found = node;
  for (let depth = 0; found && found.$ref && depth < 10; depth += 1) {
    found = root.$defs?.[found.$ref.split("/").pop()];
  }
  return found || {};
}

/** `anyOf: [X, null]` (an optional field) as X, keeping the outer annotations. */
function unwrap(root, property) {
  const node = resolve(root, property);
  const branches = node.anyOf || node.oneOf;
  if (!branches) return { ...node };
  const real = branches.map((branch) => resolve(root, branch)).filter((branch) => branch.type !== "null");
  if (real.length !== 1) return { ...node };
  const outer = { ...node };
  delete outer.anyOf;
  delete outer.oneOf;
  if (outer.default === null) delete outer.default;
  return { ...real[0], ...outer };
}

/** One property as json-editor should show it. */
function fieldSchema(property, { dpi, required }) {
  const field = { ...property };
  // A value of any type (a variable's sample or default) is entered as text; the service
  // reads it as the variable's type.
  if (!field.type && !field.enum && !field.anyOf) field.type = "string";
  const unit = UNIT_WORDS[field["x-unit"]];
  if (unit && field["x-unit"] !== "degrees") field.title = `${field.title} (${unit})`;
  const attributes = { spellcheck: "false" };
  if (field.description) attributes.title = field.description;
  delete field.description;
  const options = { inputAttributes: attributes };
  if (field.type === "number" || field.type === "integer") {
    field.format = "number";
    if (field["x-unit"] === "mm") attributes.step = String(Math.round(dotMm(dpi) * 10000) / 10000);
    else if (field.type === "integer") attributes.step = "1";
    else attributes.step = "any";
  }
  if (field.enum) {
    options.enum_titles = field["x-enum-titles"] || field.enum.map((value) => (field["x-unit"] === "degrees" ? `${value}°` : String(value)));
  }
  if (field.type === "boolean") field.format = "checkbox";
  if (field["x-cel"]) {
    field.format = "textarea";
    attributes["data-cel"] = "true";
    attributes.rows = "2";
    attributes.placeholder = "CEL, e.g. upper(name)";
  }
  if (field.type === "string" && field.maxLength > 200 && !field.enum && !field["x-cel"]) {
    field.format = "textarea";
    attributes.rows = "2";
  }
  const compact = field.type === "boolean" || field.enum || field.format === "number";
  options.grid_columns = compact ? 6 : 12;
  if (!required) options.remove_empty_properties = true;
  field.options = options;
  return field;
}

/**
 * The sections of a form for the definition `name` of the published schema `root`: each
 * {group, schema} holds the properties of one `x-group`, in the schema's order.
 */
export function sections(root, name, { dpi = 203, only = null } = {}) {
  const definition = root.$defs?.[name] || (root.title === name ? root : {});
  const required = new Set(definition.required || []);
  const groups = new Map();
  for (const [key, property] of Object.entries(definition.properties || {})) {
    if (OWN_WAY.has(key) || (only && !only.includes(key))) continue;
    const field = unwrap(root, property);
    const group = field["x-group"] || "General";
    if (!groups.has(group)) groups.set(group, { type: "object", properties: {}, required: [] });
    const section = groups.get(group);
    section.properties[key] = fieldSchema(field, { dpi, required: required.has(key) });
    if (required.has(key)) section.required.push(key);
  }
  return [...groups].map(([group, schema]) => ({
    group,
    schema: { ...schema, format: "grid", options: { compact: true, disable_collapse: true } },
  }));
}

const TYPING_PAUSE_MS = 250;

function isEmpty(value) {
  return value === undefined || value === null || value === "" || (typeof value === "number" && Number.isNaN(value));
}

const EDITOR_OPTIONS = {
  theme: "console",
  iconlib: null,
  disable_theme_rules: true,
  disable_collapse: true,
  disable_edit_json: true,
  disable_properties: true,
  disable_array_reorder: true,
  disable_array_delete_all_rows: true,
  disable_array_delete_last_row: true,
  prompt_before_delete: false,
  no_additional_properties: true,
  show_errors: "never", // the service checks every change and its errors show at the fields
  keep_oneof_values: false,
};

/**
 * A form of several sections over one value (an object, a variable, the label's size): each
 * section's json-editor edits its properties; `onChange(changes, removed)` gets what a person
 * changed (never what `setValue` set).
 */
export class SchemaForm {
  constructor(JSONEditor, host, sectionList, value, { onChange, prefix = "p", headings = true }) {
    this.onChange = onChange;
    this.editors = [];
    this.quiet = 0;
    this.element = h("div", { class: "dz-form" });
    host.append(this.element);
    const built = [];
    for (const { group, schema } of sectionList) {
      const headingId = nextId("sec");
      const holder = h("div", { class: "dz-form-body" });
      const section = h(
        "section",
        { class: "dz-form-section", "aria-labelledby": headings ? headingId : null, "aria-label": headings ? null : group },
        headings ? h("h3", { id: headingId }, group) : null,
        holder,
      );
      this.element.append(section);
      const start = this.slice(schema, value);
      const root = `${prefix}_${group.toLowerCase().replace(/\W+/g, "_")}`;
      const editor = new JSONEditor(holder, { ...EDITOR_OPTIONS, schema, startval: start, form_name_root: root });
      const entry = { editor, schema, root, last: JSON.stringify(start), section, ready: false };
      // json-editor builds asynchronously and fills in the schema's defaults: what it holds
      // once ready is the starting point, not a change someone made.
      built.push(
        new Promise((resolve) => {
          editor.on("ready", () => {
            entry.ready = true;
            entry.last = JSON.stringify(editor.getValue() || {});
            resolve();
          });
        }),
      );
      editor.on("change", () => entry.ready && this.changed(entry));
      this.editors.push(entry);
    }
    /** json-editor builds its fields asynchronously: helpers beside them wait for this. */
    this.ready = Promise.all(built);
    // json-editor takes a field's value when it changes (on leaving it); the canvas should
    // follow the typing: a pause in typing counts as a change.
    const pauses = new WeakMap();
    this.element.addEventListener("input", (event) => {
      const field = event.target;
      if (!(field instanceof HTMLTextAreaElement || (field instanceof HTMLInputElement && !["checkbox", "radio"].includes(field.type)))) return;
      clearTimeout(pauses.get(field));
      pauses.set(field, setTimeout(() => field.dispatchEvent(new Event("change", { bubbles: true })), TYPING_PAUSE_MS));
    });
  }

  /** The section's part of `value`, every field present: json-editor shows only the fields a
   * value has, so one not given is shown empty (or as its default), to be filled in. */
  slice(schema, value) {
    const part = {};
    for (const [key, field] of Object.entries(schema.properties)) {
      if (value[key] !== undefined && value[key] !== null) part[key] = value[key];
      else if (field.default !== undefined) part[key] = field.default;
      else part[key] = field.type === "boolean" ? false : "";
    }
    return part;
  }

  changed(entry) {
    if (this.quiet) return;
    const now = entry.editor.getValue() || {};
    const text = JSON.stringify(now);
    if (text === entry.last) return;
    const before = JSON.parse(entry.last);
    entry.last = text;
    const changes = {};
    const removed = [];
    for (const key of Object.keys(entry.schema.properties)) {
      const value = now[key];
      if (isEmpty(value)) {
        if (!isEmpty(before[key])) removed.push(key);
      } else if (JSON.stringify(value) !== JSON.stringify(before[key])) {
        changes[key] = value;
      }
    }
    if (Object.keys(changes).length || removed.length) this.onChange(changes, removed);
  }

  /** Show `value` (a change made elsewhere: the canvas, undo) without reporting it back; the
   * field someone is typing in keeps what they type. */
  setValue(value) {
    this.quiet += 1;
    try {
      for (const entry of this.editors) {
        if (!entry.ready) continue;
        const part = this.slice(entry.schema, value);
        for (const [key, wanted] of Object.entries(part)) {
          const field = entry.editor.getEditor(`${entry.root}.${key}`);
          if (!field || field.container.contains(document.activeElement)) continue;
          if (JSON.stringify(field.getValue()) !== JSON.stringify(wanted)) field.setValue(wanted);
        }
        entry.last = JSON.stringify(entry.editor.getValue() || {});
      }
    } finally {
      this.quiet -= 1;
    }
  }

  /** The service's word on the fields (document.invalid's errors by JSON path): each message
   * under its field, the field marked invalid; `keyOf(path)` names the field a path is in. */
  showErrors(errors, keyOf) {
    for (const old of this.element.querySelectorAll(".dz-field-error")) old.remove();
    for (const input of this.element.querySelectorAll("[aria-invalid='true']:not([data-cel])")) input.removeAttribute("aria-invalid");
    for (const error of errors) {
      const key = keyOf(error.path || "");
      if (!key) continue;
      const input = this.input(key);
      const place = input?.closest(".form-control") || this.element.querySelector(".dz-form-section");
      if (!place) continue;
      const note = h("p", { class: "dz-field-error", id: nextId("err") }, error.message);
      place.append(note);
      if (input) {
        input.setAttribute("aria-invalid", "true");
        input.setAttribute("aria-describedby", [input.getAttribute("aria-describedby"), note.id].filter(Boolean).join(" "));
      }
    }
  }

  /** The input of a property (for inline checks and helpers beside it). */
  input(key) {
    return this.element.querySelector(`[data-schemapath$=".${CSS.escape(key)}"] input, [data-schemapath$=".${CSS.escape(key)}"] textarea, [data-schemapath$=".${CSS.escape(key)}"] select`);
  }

  destroy() {
    for (const { editor } of this.editors) editor.destroy();
    this.element.remove();
  }
}
