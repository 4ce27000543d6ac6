// The label document as the designer changes it: pure functions from a document to a new one
// (objects not touched are shared, so a hundred undo steps cost little). Positions are computed
// in printer dots from the render's own geometry and written back in mm that round to exactly
// those dots.

import { dotsToMm, mmToDots } from "./units.js";

/** A new document with `objects` replaced (everything else shared). */
export function withObjects(document, objects) {
  return { ...document, objects };
}

export function objectById(document, id) {
  return document.objects.find((obj) => obj.id === id) || null;
}

export function indexOf(document, id) {
  return document.objects.findIndex((obj) => obj.id === id);
}

/** `base`, else `base_2`, `base_3`, … : an id no object of `document` (or `taken`) has. */
export function uniqueId(document, base, taken = new Set()) {
  const used = new Set([...document.objects.map((obj) => obj.id), ...taken]);
  const stem = (String(base).replace(/[^A-Za-z0-9_.-]/g, "_").replace(/_\d+$/, "") || "object").slice(0, 56);
  if (!used.has(stem)) return stem;
  for (let n = 2; ; n += 1) {
    const candidate = `${stem}_${n}`;
    if (!used.has(candidate)) return candidate;
  }
}

/** The object's anchor (its box's top-left) in dots: from the layout, else from its mm. */
export function anchorDots(obj, box, dpi) {
  if (box) return [box[0], box[1]];
  return [mmToDots(obj.x_mm, dpi), mmToDots(obj.y_mm, dpi)];
}

function placedAt(obj, xDots, yDots, dpi) {
  return { ...obj, x_mm: dotsToMm(xDots, dpi), y_mm: dotsToMm(yDots, dpi) };
}

/** Objects `ids` moved by (dx, dy) dots; `boxes`: id → the layout's box. */
export function moveBy(document, ids, dx, dy, boxes) {
  if (!dx && !dy) return document;
  const dpi = document.dpi;
  const chosen = new Set(ids);
  return withObjects(
    document,
    document.objects.map((obj) => {
      if (!chosen.has(obj.id)) return obj;
      const [x, y] = anchorDots(obj, boxes.get(obj.id), dpi);
      return placedAt(obj, x + dx, y + dy, dpi);
    }),
  );
}

/** One object's changed fields merged in (a property panel's edit). */
export function updateObject(document, id, changes, removed = []) {
  return withObjects(
    document,
    document.objects.map((obj) => {
      if (obj.id !== id) return obj;
      const next = { ...obj, ...changes };
      for (const key of removed) delete next[key];
      return next;
    }),
  );
}

export function removeObjects(document, ids) {
  const gone = new Set(ids);
  return withObjects(document, document.objects.filter((obj) => !gone.has(obj.id)));
}

/** Copies of `objects` with fresh ids, moved by (dx, dy) dots, added on top; answers the new
 * document and the new ids. */
export function addCopies(document, objects, dx, dy, boxes = new Map()) {
  const dpi = document.dpi;
  const taken = new Set();
  const copies = objects.map((obj) => {
    const id = uniqueId(document, obj.id, taken);
    taken.add(id);
    const [x, y] = anchorDots(obj, boxes.get(obj.id), dpi);
    return { ...placedAt(obj, x + dx, y + dy, dpi), id };
  });
  return [withObjects(document, [...document.objects, ...copies]), copies.map((obj) => obj.id)];
}

export function addObject(document, obj) {
  const id = uniqueId(document, obj.id || obj.type);
  return [withObjects(document, [...document.objects, { ...obj, id }]), id];
}

/** A quarter turn clockwise (or back) about the centre of each object's box. */
export function rotate(document, ids, boxes, clockwise = true) {
  const dpi = document.dpi;
  const chosen = new Set(ids);
  return withObjects(
    document,
    document.objects.map((obj) => {
      if (!chosen.has(obj.id)) return obj;
      const rotation = ((obj.rotation || 0) + (clockwise ? 90 : 270)) % 360;
      const box = boxes.get(obj.id);
      if (!box) return { ...obj, rotation };
      const [left, top, right, bottom] = box;
      const cx = (left + right) / 2;
      const cy = (top + bottom) / 2;
      const [w, h] = [right - left, bottom - top];
      return { ...placedAt(obj, Math.round(cx - h / 2), Math.round(cy - w / 2), dpi), rotation };
    }),
  );
}

/** The object's own width and height (unrotated) for a box of w × h dots as placed. */
function ownSize(obj, w, h) {
  return obj.rotation === 90 || obj.rotation === 270 ? [h, w] : [w, h];
}

/**
 * The object resized so that its box becomes `box` (dots: [left, top, right, bottom]); `was` is
 * the layout's entry for it (box, module_dots, bar_height_dots). Each kind changes what its
 * size is made of: a box's width and height, a line's length, a text's box, a barcode's module
 * and bar height.
 */
export function resize(document, id, box, was) {
  const dpi = document.dpi;
  const obj = objectById(document, id);
  if (!obj) return document;
  const [left, top, right, bottom] = box.map(Math.round);
  const [w, h] = ownSize(obj, Math.max(1, right - left), Math.max(1, bottom - top));
  const [oldW, oldH] = ownSize(obj, was.box[2] - was.box[0], was.box[3] - was.box[1]);
  let next = placedAt(obj, left, top, dpi);
  switch (obj.type) {
    case "box":
    case "ellipse":
    case "image":
      next = { ...next, width_mm: dotsToMm(w, dpi), height_mm: dotsToMm(h, dpi) };
      break;
    case "line":
      next = { ...next, length_mm: dotsToMm(w, dpi) };
      break;
    case "text":
      next = { ...next, width_mm: dotsToMm(w, dpi) };
      if (obj.height_mm !== undefined && obj.height_mm !== null) next.height_mm = dotsToMm(h, dpi);
      else if (Math.abs(h - oldH) > 1) next.height_mm = dotsToMm(h, dpi);
      break;
    case "barcode":
      next = resizedBarcode(next, w, h, oldW, oldH, was, dpi);
      break;
    default:
      break;
  }
  return withObjects(document, document.objects.map((item) => (item.id === id ? next : item)));
}

function resizedBarcode(obj, w, h, oldW, oldH, was, dpi) {
  const module = was.module_dots || 2;
  const next = { ...obj };
  const linear = was.bar_height_dots !== null && was.bar_height_dots !== undefined;
  const scale = linear ? w / oldW : Math.max(w / oldW, h / oldH);
  const modules = Math.max(1, Math.round(module * scale));
  if (modules !== module) {
    next.module_width_dots = modules;
    delete next.module_width_mm;
  }
  if (linear && Math.abs(h - oldH) >= 1) {
    const text = oldH - was.bar_height_dots; // the human-readable line under the bars
    const bars = Math.max(1, h - text);
    next.height_mm = dotsToMm(bars, dpi);
    delete next.height_dots;
  }
  return next;
}

// --- arranging several objects ------------------------------------------------------------------

function bounds(boxes) {
  return [
    Math.min(...boxes.map((b) => b[0])),
    Math.min(...boxes.map((b) => b[1])),
    Math.max(...boxes.map((b) => b[2])),
    Math.max(...boxes.map((b) => b[3])),
  ];
}

/**
 * Align the objects' boxes: `left`, `center`, `right`, `top`, `middle`, `bottom`. Several
 * objects align to their common bounds; one object aligns to the label.
 */
export function align(document, ids, boxes, edge, labelSize) {
  const chosen = ids.filter((id) => boxes.has(id));
  if (!chosen.length) return document;
  const frame = chosen.length === 1 ? [0, 0, labelSize[0], labelSize[1]] : bounds(chosen.map((id) => boxes.get(id)));
  const moves = new Map();
  for (const id of chosen) {
    const [l, t, r, b] = boxes.get(id);
    const dx = { left: frame[0] - l, right: frame[2] - r, center: Math.round((frame[0] + frame[2] - l - r) / 2) }[edge] ?? 0;
    const dy = { top: frame[1] - t, bottom: frame[3] - b, middle: Math.round((frame[1] + frame[3] - t - b) / 2) }[edge] ?? 0;
    moves.set(id, [dx, dy]);
  }
  return moveEach(document, moves, boxes);
}

/** Equal gaps between three or more boxes, across (`horizontal`) or down (`vertical`). */
export function distribute(document, ids, boxes, axis) {
  const chosen = ids.filter((id) => boxes.has(id));
  if (chosen.length < 3) return document;
  const [start, end] = axis === "horizontal" ? [0, 2] : [1, 3];
  const sorted = [...chosen].sort((a, b) => boxes.get(a)[start] - boxes.get(b)[start]);
  const first = boxes.get(sorted[0]);
  const last = boxes.get(sorted[sorted.length - 1]);
  const sizes = sorted.map((id) => boxes.get(id)[end] - boxes.get(id)[start]);
  const free = last[end] - first[start] - sizes.reduce((a, b) => a + b, 0);
  const gap = free / (sorted.length - 1);
  const moves = new Map();
  let at = first[start];
  sorted.forEach((id, i) => {
    const delta = Math.round(at) - boxes.get(id)[start];
    moves.set(id, axis === "horizontal" ? [delta, 0] : [0, delta]);
    at += sizes[i] + gap;
  });
  return moveEach(document, moves, boxes);
}

function moveEach(document, moves, boxes) {
  const dpi = document.dpi;
  return withObjects(
    document,
    document.objects.map((obj) => {
      const move = moves.get(obj.id);
      if (!move || (!move[0] && !move[1])) return obj;
      const [x, y] = anchorDots(obj, boxes.get(obj.id), dpi);
      return placedAt(obj, x + move[0], y + move[1], dpi);
    }),
  );
}

/** Drawing order: `front`, `back`, `forward` (one up), `backward` (one down). */
export function reorder(document, ids, where) {
  const chosen = new Set(ids);
  const objects = [...document.objects];
  if (where === "front" || where === "back") {
    const moving = objects.filter((obj) => chosen.has(obj.id));
    const rest = objects.filter((obj) => !chosen.has(obj.id));
    return withObjects(document, where === "front" ? [...rest, ...moving] : [...moving, ...rest]);
  }
  const step = where === "forward" ? 1 : -1;
  const order = step > 0 ? [...objects.keys()].reverse() : [...objects.keys()];
  for (const i of order) {
    const j = i + step;
    if (!chosen.has(objects[i].id) || j < 0 || j >= objects.length || chosen.has(objects[j].id)) continue;
    [objects[i], objects[j]] = [objects[j], objects[i]];
  }
  return withObjects(document, objects);
}

// --- variables ---------------------------------------------------------------------------------

const NAME = /\b([A-Za-z_][A-Za-z0-9_]*)\b/g;

/** Declared variables an object's expression names (for copying objects between labels). */
export function variablesUsed(document, objects) {
  const declared = new Map((document.variables || []).map((v) => [v.name, v]));
  const found = new Map();
  const visit = (source) => {
    for (const [, name] of String(source || "").matchAll(NAME)) {
      const variable = declared.get(name);
      if (variable && !found.has(name)) {
        found.set(name, variable);
        visit(variable.expression);
      }
    }
  };
  for (const obj of objects) visit(obj.expression);
  return [...found.values()];
}

/** `variables` declared in `document` unless it declares them already. */
export function withVariables(document, variables) {
  const names = new Set((document.variables || []).map((v) => v.name));
  const missing = variables.filter((v) => !names.has(v.name));
  return missing.length ? { ...document, variables: [...(document.variables || []), ...missing] } : document;
}
