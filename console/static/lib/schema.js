// The API's own limits for the console's forms: lengths, patterns, ranges and choices come from
// the API's OpenAPI document (by operationId and field), never from copies kept here, so a form
// refuses what the API would refuse before it is sent, and follows the API when it changes.

import { get } from "./api.js";

let loading = null;

function resolve(doc, schema) {
  let node = schema || {};
  for (let depth = 0; node.$ref && depth < 10; depth += 1) {
    node = doc.components?.schemas?.[node.$ref.split("/").pop()] || {};
  }
  return node;
}

/** A field's schema, with `anyOf: [X, null]` (optional fields) unwrapped to X. */
function unwrap(doc, schema) {
  const node = resolve(doc, schema);
  const branches = node.anyOf || node.oneOf;
  if (!branches) return node;
  const real = branches.map((b) => resolve(doc, b)).filter((b) => b.type !== "null");
  return real.length === 1 ? real[0] : node;
}

/** The properties of a request body, merged over its variants (oneOf with a discriminator). */
function bodyProperties(doc, operation) {
  const schema = resolve(doc, operation.requestBody?.content?.["application/json"]?.schema);
  const variants = (schema.oneOf || schema.anyOf || [schema]).map((v) => resolve(doc, v));
  return Object.assign({}, ...variants.map((v) => v.properties || {}).reverse());
}

export class Rules {
  constructor(doc) {
    this.doc = doc || {};
    this.operations = {};
    for (const methods of Object.values(this.doc.paths || {})) {
      for (const operation of Object.values(methods)) {
        if (operation && operation.operationId) this.operations[operation.operationId] = operation;
      }
    }
  }

  /** The schema of `name` in operation `operationId`: a body field, else a path or query parameter. */
  schema(operationId, name) {
    const operation = this.operations[operationId];
    if (!operation) return {};
    const property = bodyProperties(this.doc, operation)[name];
    if (property) return unwrap(this.doc, property);
    const parameter = (operation.parameters || []).find((p) => p.name === name);
    return parameter ? unwrap(this.doc, parameter.schema) : {};
  }

  /** The allowed values of an enum field (or of an array of enums), in the API's order. */
  choices(operationId, name, fallback = []) {
    const schema = this.schema(operationId, name);
    const values = schema.enum || unwrap(this.doc, schema.items).enum;
    return values && values.length ? values : fallback;
  }

  /**
   * Gives `control` the field's limits: maxlength/minlength for text, min/max for numbers, and
   * the pattern as a custom validity check (the pattern attribute compiles with the `v` flag,
   * which refuses some patterns the API writes; `u` reads them as the API means them).
   * `hint` says in words what the pattern allows.
   */
  constrain(control, operationId, name, { hint } = {}) {
    const schema = this.schema(operationId, name);
    const numeric = control.type === "number";
    if (!numeric && schema.maxLength !== undefined) control.maxLength = schema.maxLength;
    if (!numeric && schema.minLength > 1) control.minLength = schema.minLength;
    if (numeric && schema.maximum !== undefined) control.max = String(schema.maximum);
    if (numeric && schema.minimum !== undefined) control.min = String(schema.minimum);
    if (schema.pattern) {
      let pattern = null;
      try {
        pattern = new RegExp(schema.pattern, "u");
      } catch {
        pattern = null; // a pattern JavaScript cannot read: the API still checks it
      }
      if (pattern) {
        const message = hint ? `Allowed: ${hint}.` : `Not in the form the API accepts (${schema.pattern}).`;
        control.checkPattern = () => {
          const value = control.value.trim();
          control.setCustomValidity(value && !pattern.test(value) ? message : "");
        };
        control.addEventListener("input", control.checkPattern);
        control.checkPattern();
      }
    }
    return control;
  }
}

/** The rules of this service's API, fetched once per page load; no rules if they cannot load. */
export function apiRules() {
  if (!loading) {
    loading = get("/openapi.json")
      .then((doc) => new Rules(doc))
      .catch(() => {
        loading = null; // try again on the next page
        return new Rules({});
      });
  }
  return loading;
}

/** Every operationId the API has, sorted (for the audit log's operation filter). */
export async function operationIds() {
  return Object.keys((await apiRules()).operations).sort();
}
