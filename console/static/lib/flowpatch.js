// Comparing flow documents: the JSON Patch (RFC 6902) that turns a saved version into the
// editor's document, and the changes node by node (for the version comparison). Nodes are
// matched by id, never by position: a removed node is `remove /nodes/<i>` and every other id
// stays where it was, as patchFlowDocument requires.

const escape = (key) => String(key).replace(/~/g, "~0").replace(/\//g, "~1");

/** Structural equality of JSON values (object keys in any order). */
export function same(a, b) {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((item, i) => same(item, b[i]));
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && same(a[k], b[k]));
}

function objectOps(path, before, after, ops) {
  for (const key of Object.keys(before)) {
    if (!Object.hasOwn(after, key)) ops.push({ op: "remove", path: `${path}/${escape(key)}` });
  }
  for (const [key, value] of Object.entries(after)) {
    if (!Object.hasOwn(before, key)) ops.push({ op: "add", path: `${path}/${escape(key)}`, value });
    else if (!same(before[key], value)) ops.push({ op: "replace", path: `${path}/${escape(key)}`, value });
  }
}

/** The operations that make `after` of `before`: nodes removed by index (last first), each kept
 * node changed field by field, new nodes added at the end, other top-level fields replaced. */
export function patchOf(before, after) {
  const ops = [];
  const beforeNodes = before.nodes || [];
  const afterNodes = after.nodes || [];
  const afterById = new Map(afterNodes.map((n) => [n.id, n]));
  for (let i = beforeNodes.length - 1; i >= 0; i -= 1) {
    if (!afterById.has(beforeNodes[i].id)) ops.push({ op: "remove", path: `/nodes/${i}` });
  }
  const kept = beforeNodes.filter((n) => afterById.has(n.id));
  kept.forEach((node, index) => objectOps(`/nodes/${index}`, node, afterById.get(node.id), ops));
  const known = new Set(beforeNodes.map((n) => n.id));
  for (const node of afterNodes) {
    if (!known.has(node.id)) ops.push({ op: "add", path: "/nodes/-", value: node });
  }
  const { nodes: _b, ...beforeRest } = before;
  const { nodes: _a, ...afterRest } = after;
  objectOps("", beforeRest, afterRest, ops);
  return ops;
}

/** Each setting by its pointer: objects and lists of objects (a switch's cases) are opened,
 * other values (a list of wires, text) are compared whole. */
function leaves(value, path, out) {
  const opened = value && typeof value === "object" && (!Array.isArray(value) || value.some((item) => item && typeof item === "object"));
  if (opened && Object.keys(value).length) {
    for (const [key, item] of Object.entries(value)) leaves(item, `${path}/${escape(key)}`, out);
  } else {
    out.set(path, value);
  }
  return out;
}

/** What differs in one node's settings (its position aside): [{path, before, after}], where a
 * path is a JSON Pointer inside the node and a missing side is undefined. */
export function settingChanges(before, after) {
  const strip = (node) => {
    const { ui, ...rest } = node || {};
    return rest;
  };
  const a = leaves(strip(before), "", new Map());
  const b = leaves(strip(after), "", new Map());
  const changes = [];
  for (const path of new Set([...a.keys(), ...b.keys()])) {
    if (!same(a.get(path), b.get(path))) changes.push({ path: path || "/", before: a.get(path), after: b.get(path) });
  }
  return changes;
}

/** Node by node, what `after` changed of `before`: {added, removed, changed: Map(id → changes),
 * moved: Set(id)}; added and removed are node lists. */
export function nodeChanges(before, after) {
  const old = new Map((before.nodes || []).map((n) => [n.id, n]));
  const now = new Map((after.nodes || []).map((n) => [n.id, n]));
  const changed = new Map();
  const moved = new Set();
  for (const [id, node] of now) {
    if (!old.has(id)) continue;
    const changes = settingChanges(old.get(id), node);
    if (changes.length) changed.set(id, changes);
    if (!same(old.get(id).ui, node.ui)) moved.add(id);
  }
  return {
    added: [...now.values()].filter((n) => !old.has(n.id)),
    removed: [...old.values()].filter((n) => !now.has(n.id)),
    changed,
    moved,
  };
}

const unescape = (token) => token.replace(/~1/g, "/").replace(/~0/g, "~");

/** `document` with RFC 6902 `operations` applied (a copy; the original stays): the AI helper's
 * suggestions, which the service already checked against this very document. */
export function applyPatch(document, operations) {
  const root = { value: structuredClone(document) };
  const locate = (pointer) => {
    const tokens = String(pointer).split("/").slice(1).map(unescape);
    let parent = root;
    let key = "value";
    for (const token of tokens) {
      parent = parent[key];
      key = Array.isArray(parent) && token !== "-" ? Number(token) : token;
      if (parent === null || typeof parent !== "object") throw new Error(`${pointer} does not exist`);
    }
    return { parent, key };
  };
  const get = (pointer) => {
    const { parent, key } = locate(pointer);
    return structuredClone(parent[key]);
  };
  const put = (pointer, value, insert) => {
    const { parent, key } = locate(pointer);
    if (Array.isArray(parent) && insert) parent.splice(key === "-" ? parent.length : key, 0, value);
    else parent[key] = value;
  };
  const drop = (pointer) => {
    const { parent, key } = locate(pointer);
    if (Array.isArray(parent)) parent.splice(key, 1);
    else delete parent[key];
  };
  for (const operation of operations) {
    const { op, path } = operation;
    if (op === "add") put(path, structuredClone(operation.value), true);
    else if (op === "replace") put(path, structuredClone(operation.value), false);
    else if (op === "remove") drop(path);
    else if (op === "copy") put(path, get(operation.from), true);
    else if (op === "move") {
      const value = get(operation.from);
      drop(operation.from);
      put(path, value, true);
    } else if (op === "test" && !same(get(path), operation.value)) throw new Error(`test failed at ${path}`);
  }
  return root.value;
}
