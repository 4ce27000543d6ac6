// A three-way merge of label documents by object id and variable name: the changes made since
// `base` in `mine` applied to `theirs` (a version someone saved meanwhile). Each object or
// variable changed on one side only takes that side; changed on both, field by field, with
// mine kept where both changed the same field (reported as a conflict).

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

function mergeItem(base, mine, theirs, conflicts, name) {
  if (same(mine, base)) return theirs; // only they changed it (or nobody)
  if (same(theirs, base)) return mine; // only I did
  if (mine === undefined || theirs === undefined) {
    conflicts.push(`${name}: ${mine === undefined ? "you deleted" : "they deleted"} what the other side changed; it is kept`);
    return mine === undefined ? theirs : mine;
  }
  if (base === undefined) {
    conflicts.push(`${name}: added on both sides; yours is kept`);
    return mine;
  }
  const merged = {};
  for (const key of new Set([...Object.keys(base), ...Object.keys(mine), ...Object.keys(theirs)])) {
    const [b, m, t] = [base[key], mine[key], theirs[key]];
    let value;
    if (same(m, b)) value = t;
    else if (same(t, b) || same(m, t)) value = m;
    else {
      value = m;
      conflicts.push(`${name}.${key}: changed on both sides; yours is kept`);
    }
    if (value !== undefined) merged[key] = value;
  }
  return merged;
}

function mergeList(base = [], mine = [], theirs = [], key, conflicts, kind) {
  const byKey = (list) => new Map(list.map((item) => [item[key], item]));
  const [b, m, t] = [byKey(base), byKey(mine), byKey(theirs)];
  const order = [...t.keys()];
  for (const id of m.keys()) if (!t.has(id) && !b.has(id)) order.push(id); // mine, new
  for (const id of m.keys()) if (!order.includes(id) && b.has(id)) order.push(id); // kept, they deleted
  const merged = [];
  for (const id of order) {
    const item = mergeItem(b.get(id), m.get(id), t.get(id), conflicts, `${kind} ${id}`);
    if (item !== undefined) merged.push(item);
  }
  return merged;
}

/** {document, conflicts}: my changes since `base` on top of `theirs`. */
export function mergeDocuments(base, mine, theirs) {
  const conflicts = [];
  const document = { ...theirs };
  for (const key of ["size", "dpi"]) {
    if (!same(mine[key], base[key])) {
      if (!same(theirs[key], base[key]) && !same(theirs[key], mine[key])) conflicts.push(`${key}: changed on both sides; yours is kept`);
      document[key] = mine[key];
    }
  }
  document.objects = mergeList(base.objects, mine.objects, theirs.objects, "id", conflicts, "object");
  document.variables = mergeList(base.variables, mine.variables, theirs.variables, "name", conflicts, "variable");
  return { document, conflicts };
}

/** RFC 6902 operations that turn `base` into `next`, keeping every object's id: removals by
 * index (the service refuses anything else that drops an id), then the changed parts. */
export function operations(base, next) {
  const ops = [];
  const kept = new Set(next.objects.map((obj) => obj.id));
  base.objects.forEach((obj, index) => {
    if (!kept.has(obj.id)) ops.push({ index, op: { op: "remove", path: `/objects/${index}` } });
  });
  const removals = ops.sort((a, b) => b.index - a.index).map((entry) => entry.op);
  const remaining = base.objects.filter((obj) => kept.has(obj.id));
  const changes = [];
  const sameOrder = remaining.every((obj, i) => next.objects[i]?.id === obj.id);
  if (sameOrder) {
    remaining.forEach((obj, i) => {
      if (!same(obj, next.objects[i])) changes.push({ op: "replace", path: `/objects/${i}`, value: next.objects[i] });
    });
    for (const obj of next.objects.slice(remaining.length)) changes.push({ op: "add", path: "/objects/-", value: obj });
  } else {
    changes.push({ op: "replace", path: "/objects", value: next.objects });
  }
  for (const key of ["size", "dpi", "variables"]) {
    if (!same(base[key], next[key])) changes.push({ op: next[key] === undefined ? "remove" : base[key] === undefined ? "add" : "replace", path: `/${key}`, value: next[key] });
  }
  return [...removals, ...changes].map((op) => (op.op === "remove" ? { op: "remove", path: op.path } : op));
}
