// A node type's published field schema (getFlowRegistry) made into what the form library
// (json-editor) draws: references resolved, optional (nullable) fields as plain ones, wires
// left to the canvas, and each string's `format` turned into its control — CEL in a code
// field, label references and credentials as choices, printer aliases with suggestions.

const WORDS = { Url: "URL", Cel: "CEL", Http: "HTTP", Id: "ID" };

/** "Every S" → "Every s"; pydantic's titles, in the console's sentence case. */
function title(text) {
  const words = String(text || "").split(" ");
  return words.map((word, i) => WORDS[word] || (i ? word.toLowerCase() : word)).join(" ");
}

const nodeIds = (schema) => schema?.type === "array" && schema.items?.format === "node-id";

/**
 * `choices`: {labels: [[reference, title]], credentials: [[ref, title]] | null, aliases:
 * datalist id, variables: {name, type, required, description}[] | null (of the chosen label)}.
 */
export function formSchema(fields, choices = {}) {
  const defs = fields.$defs || {};
  const resolve = (node) => {
    let current = node;
    for (let i = 0; current && current.$ref && i < 20; i += 1) current = defs[String(current.$ref).split("/").pop()];
    return current || {};
  };

  function walk(raw, key) {
    let node = { ...resolve(raw) };
    if (Array.isArray(node.anyOf)) {
      const [option] = node.anyOf.filter((o) => resolve(o).type !== "null");
      if (nodeIds(resolve(option))) return null;
      const { anyOf, default: fallback, ...outer } = node;
      node = { ...resolve(option), ...outer };
      if (fallback !== null && fallback !== undefined) node.default = fallback;
    }
    if (nodeIds(node)) return null;
    const out = { ...node };
    delete out.examples;
    if (out.title) out.title = title(out.title);
    if (out.description) out.description = out.description.replace(/`/g, "");
    const options = { ...(out.options || {}) };
    const inputAttributes = { ...(options.inputAttributes || {}) };
    const example = Array.isArray(node.examples) ? node.examples[0] : undefined;
    if (out.type === "object" && !node.properties && node.additionalProperties && typeof node.additionalProperties === "object") {
      return mapSchema(out, walk(node.additionalProperties), key);
    }
    if (out.type === "object") {
      const properties = {};
      for (const [name, child] of Object.entries(node.properties || {})) {
        const made = walk(child, name);
        if (made) properties[name] = made;
      }
      // An item that owns wires keeps a port key the canvas draws its output by.
      if (Object.values(node.properties || {}).some((child) => nodeIds(resolve(child)))) {
        properties._port = { type: "string", options: { hidden: true } };
      }
      out.properties = properties;
      // json-editor shows an optional field only once it has a value; every field is listed
      // as "required" for it to be shown (empty ones are left out of the value all the same).
      out.required = Object.keys(properties).filter((name) => name !== "_port");
      if (node.additionalProperties && typeof node.additionalProperties === "object") {
        out.additionalProperties = walk(node.additionalProperties);
      }
      if (node.additionalProperties === false) options.no_additional_properties = true;
      // A map (field name → value) is edited by adding names; an object's own fields are shown.
      options.disable_properties = !(out.additionalProperties && !Object.keys(properties).length);
      options.disable_collapse = true;
    } else if (out.type === "array" && node.items) {
      out.items = walk(node.items);
      const one = String(out.title || key || "Item").replace(/s$/, "");
      if (out.items?.type === "object") out.items.headerTemplate = `${one} {{i1}}`;
      out.items.title = one;
      options.disable_array_delete_all_rows = true;
      options.disable_array_delete_last_row = true;
      options.disable_array_copy = true;
    } else if (out.type === "string") {
      if (typeof example === "string") inputAttributes.placeholder = example;
      if (node.format === "cel") {
        delete out.format;
        inputAttributes.class = "fe-cel";
        inputAttributes.spellcheck = "false";
        inputAttributes.autocomplete = "off";
        inputAttributes["data-cel"] = "true";
      } else if (node.format === "label-reference") {
        delete out.format;
        delete out.pattern;
        out.enum = ["", ...(choices.labels || []).map(([value]) => value)];
        options.enum_titles = ["— choose a label —", ...(choices.labels || []).map(([, text]) => text)];
      } else if (node.format === "credential-ref") {
        delete out.format;
        if (choices.credentials) {
          out.enum = ["", ...choices.credentials.map(([value]) => value)];
          options.enum_titles = ["— none —", ...choices.credentials.map(([, text]) => text)];
        } else {
          out.description = `${out.description || ""} Ask an administrator for the reference.`;
        }
      } else if (node.format === "printer-alias" && choices.aliases) {
        delete out.format;
        inputAttributes.list = choices.aliases;
      }
    }
    if (Object.keys(inputAttributes).length) options.inputAttributes = inputAttributes;
    if (key && !out.title) out.title = title(key.replace(/_/g, " "));
    out.options = options;
    return out;
  }

  const schema = walk(fields);
  delete schema.$defs;
  schema.title = " ";
  schema.options = { ...schema.options, disable_collapse: true };
  if (choices.variables && schema.properties?.variables) {
    schema.properties.variables = labelVariables(schema.properties.variables, choices.variables);
  }
  return schema;
}

const NAMES = { values: "Field", variables: "Variable" };

/** A map (name → value) as rows of name and value, which people add and remove one by one;
 * `toForm` and `fromForm` turn the node's map into rows and back. */
function mapSchema(schema, value, key) {
  const { additionalProperties, maxProperties, minProperties, properties, ...rest } = schema;
  return {
    ...rest,
    type: "array",
    format: "table",
    maxItems: maxProperties,
    items: {
      type: "object",
      title: NAMES[key] || "Entry",
      properties: {
        name: { type: "string", title: NAMES[key] || "Name", options: { inputAttributes: { spellcheck: "false", autocomplete: "off" } } },
        value: { ...value, title: "CEL" },
      },
      required: ["name", "value"],
    },
    options: { ...rest.options, map: true, disable_array_reorder: true, disable_array_delete_all_rows: true, disable_array_delete_last_row: true, disable_array_copy: true },
  };
}

/** The node's fields as the form holds them (maps as rows). */
export function toForm(fields, schema) {
  const value = { ...(fields || {}) };
  for (const [key, property] of Object.entries(schema.properties || {})) {
    if (property.options?.map && value[key] && typeof value[key] === "object" && !Array.isArray(value[key])) {
      value[key] = Object.entries(value[key]).map(([name, item]) => ({ name, value: item }));
    }
  }
  return value;
}

/** The form's value as node fields (rows back into maps; a row without a name is left out). */
export function fromForm(value, schema) {
  const fields = { ...(value || {}) };
  for (const [key, property] of Object.entries(schema.properties || {})) {
    if (property.options?.map && Array.isArray(fields[key])) {
      const map = {};
      for (const row of fields[key]) if (row?.name) map[row.name] = row.value ?? "";
      fields[key] = map;
    }
  }
  return fields;
}

/** A print node's `variables` as the chosen label declares them: one CEL field each (the
 * required ones first), with the variable's type and description, instead of free rows. */
function labelVariables(schema, variables) {
  const properties = {};
  const sorted = [...variables].sort((a, b) => Number(b.required) - Number(a.required));
  for (const variable of sorted) {
    properties[variable.name] = {
      type: "string",
      title: `${variable.name} (${variable.type}${variable.required ? ", required" : ""})`,
      description: variable.description || undefined,
      options: { inputAttributes: { class: "fe-cel", spellcheck: "false", autocomplete: "off", "data-cel": "true", placeholder: `record.${variable.name}` } },
    };
  }
  return {
    type: "object",
    title: schema.title,
    properties,
    required: Object.keys(properties),
    description: "CEL for each variable of the label; leave one empty to print it empty (or its default).",
    options: { disable_properties: true, disable_collapse: true },
  };
}

/** Where a finding's JSON Pointer inside a node lands in the form ("<root>.values.0.value" for
 * `/values/qty`, maps being rows), given the node's `fields`. */
export function formPath(root, pointerInNode, schema, fields) {
  const parts = String(pointerInNode || "").split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"));
  const [key, name, ...rest] = parts;
  if (schema?.properties?.[key]?.options?.map && name !== undefined) {
    const index = Object.keys(fields?.[key] || {}).indexOf(name);
    return index < 0 ? null : [root, key, index, "value", ...rest].join(".");
  }
  return [root, ...parts].join(".");
}
