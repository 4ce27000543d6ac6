// The palette: every object type the label document has and every symbology the renderer draws
// (from the published schema, so a new symbology appears here by itself), images, and fields
// bound to a variable or a counter. A click (or Enter) adds one where the label is in view.

import { h, svg } from "../lib/dom.js";

// Data each symbology encodes when it is added: valid for it (check digits included), so that
// the new barcode scans at once and shows how big it is.
export const SAMPLE_DATA = {
  code128: "ABC-12345",
  "gs1-128": "(01)09501101530003(17)270101(10)AB12",
  ean13: "5901234123457",
  upca: "036000291452",
  code39: "CODE39",
  itf14: "1540014128876",
  qr: "ETIKETT QR 0001",
  datamatrix: "ETIKETT-0001",
  "gs1-datamatrix": "(01)09501101530003(17)270101(10)AB12",
  pdf417: "Etikett PDF417",
};
const LINEAR = new Set(["code128", "gs1-128", "ean13", "upca", "code39", "itf14"]);

const ICONS = {
  text: [["path", { d: "M5 6h14M12 6v13M9 19h6" }]],
  textblock: [["path", { d: "M4 6h16M4 10h16M4 14h16M4 18h10" }]],
  linear: [["path", { d: "M4 5v14M7 5v14M9 5v14M12 5v14M15 5v14M16.5 5v14M19 5v14" }]],
  matrix: [["path", { d: "M4 4h6v6H4zM14 4h6v6h-6zM4 14h6v6H4zM14 14h2v2h-2zM18 18h2v2h-2zM14 18h2v2h-2zM18 14h2v2h-2z" }]],
  stacked: [["path", { d: "M4 5h16M4 9h10M16 9h4M4 13h6M12 13h8M4 17h16" }]],
  box: [["rect", { x: 4, y: 6, width: 16, height: 12, rx: 1 }]],
  line: [["path", { d: "M4 12h16" }]],
  ellipse: [["ellipse", { cx: 12, cy: 12, rx: 8, ry: 6 }]],
  image: [["rect", { x: 4, y: 5, width: 16, height: 14, rx: 1 }], ["path", { d: "M4 16l5-5 4 4 3-3 4 4" }]],
  variable: [["path", { d: "M8 5c-2 0-2 2-2 4s-1 3-2 3c1 0 2 1 2 3s0 4 2 4M16 5c2 0 2 2 2 4s1 3 2 3c-1 0-2 1-2 3s0 4-2 4" }]],
  counter: [["path", { d: "M5 8h14v8H5zM9 8v8M13 8v8" }]],
};

export function icon(name) {
  return svg(
    "svg",
    { viewBox: "0 0 24 24", width: 20, height: 20, "aria-hidden": "true", focusable: "false", class: "dz-icon" },
    (ICONS[name] || ICONS.box).map(([tag, attrs]) => svg(tag, attrs)),
  );
}

function symbologyIcon(symbology) {
  if (LINEAR.has(symbology)) return "linear";
  return symbology === "pdf417" ? "stacked" : "matrix";
}

/** A new object of `kind` (its id still to be made unique), its top-left at (x, y) mm. */
export function newObject(kind, x, y, { symbology, variable, counter } = {}) {
  const at = { x_mm: x, y_mm: y, rotation: 0 };
  switch (kind) {
    case "text":
      return { id: "text", type: "text", ...at, content: "Text", size_pt: 12, weight: 500, font: "Roboto" };
    case "textblock":
      return {
        id: "text_block",
        type: "text",
        ...at,
        content: "A paragraph that wraps inside its box.",
        size_pt: 9,
        weight: 500,
        font: "Roboto",
        width_mm: 40,
        height_mm: 12,
        wrap: true,
        shrink_to_fit: true,
      };
    case "barcode": {
      const obj = { id: symbology.replace(/-/g, "_"), type: "barcode", symbology, ...at, content: SAMPLE_DATA[symbology] || "12345" };
      if (LINEAR.has(symbology)) obj.height_mm = 12;
      return obj;
    }
    case "box":
      return { id: "box", type: "box", ...at, width_mm: 30, height_mm: 15, line_mm: 0.5 };
    case "line":
      return { id: "line", type: "line", ...at, length_mm: 40, thickness_mm: 0.5 };
    case "ellipse":
      return { id: "ellipse", type: "ellipse", ...at, width_mm: 20, height_mm: 12, line_mm: 0.5 };
    case "variable":
      return { id: `${variable}_text`, type: "text", ...at, expression: variable, size_pt: 12, weight: 500, font: "Roboto" };
    case "counter":
      return { id: `${counter}_text`, type: "text", ...at, expression: `counters.${counter}`, size_pt: 12, weight: 600, font: "Roboto Mono" };
    default:
      throw new Error(`no palette entry ${kind}`);
  }
}

/**
 * The palette element. `onAdd(kind, options)` adds an object; `onImage()` asks for a file.
 * `symbologies` and their titles come from the published schema.
 */
export function palette({ symbologies, titles, onAdd, onImage }) {
  const item = (name, iconName, text, action) =>
    h(
      "li",
      h(
        "button",
        { type: "button", class: "dz-tool", title: `Add ${text.toLowerCase()}`, "aria-label": `Add ${text}`, onclick: action },
        icon(iconName),
        h("span", text),
      ),
    );
  return h(
    "nav",
    { class: "dz-palette", "aria-label": "Palette" },
    h("h2", { class: "dz-panel-title" }, "Add"),
    h(
      "ul",
      { "aria-label": "Shapes and text" },
      item("text", "text", "Text", () => onAdd("text")),
      item("textblock", "textblock", "Text block", () => onAdd("textblock")),
      item("variable", "variable", "Variable field", () => onAdd("variable")),
      item("counter", "counter", "Counter field", () => onAdd("counter")),
      item("box", "box", "Box", () => onAdd("box")),
      item("line", "line", "Line", () => onAdd("line")),
      item("ellipse", "ellipse", "Ellipse", () => onAdd("ellipse")),
      item("image", "image", "Image", () => onImage()),
    ),
    h("h2", { class: "dz-panel-title" }, "Barcodes"),
    h(
      "ul",
      { "aria-label": "Barcodes" },
      symbologies.map((symbology, index) =>
        item(symbology, symbologyIcon(symbology), titles[index] || symbology, () => onAdd("barcode", { symbology })),
      ),
    ),
  );
}
