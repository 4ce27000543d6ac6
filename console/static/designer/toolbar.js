// The designer's toolbar: undo and redo, zoom, rotation, drawing order, alignment and
// distribution, grid and snapping. A toolbar in the ARIA sense: one Tab stop, arrow keys move
// between its controls. Buttons say what they do and their shortcut; those that cannot act now
// are marked so (aria-disabled), never removed, so nothing moves under the pointer.

import { h, svg } from "../lib/dom.js";
import { select } from "../lib/ui.js";
import { ZOOM_STEPS } from "./canvas.js";

const PATHS = {
  undo: "M9 7L5 11l4 4M5 11h9a5 5 0 0 1 0 10h-3",
  redo: "M15 7l4 4-4 4M19 11h-9a5 5 0 0 0 0 10h3",
  zoomOut: "M5 12h14",
  zoomIn: "M12 5v14M5 12h14",
  fit: "M4 9V4h5M15 4h5v5M20 15v5h-5M9 20H4v-5",
  rotate: "M20 11a8 8 0 1 0-2.3 5.7M20 5v6h-6",
  front: "M8 8h10v10H8zM5 5h8v2H7v6H5z",
  back: "M5 5h10v10H5zM18 9v9h-9v-2h7V9z",
  alignLeft: "M5 4v16M8 7h10v3H8zM8 14h6v3H8z",
  alignCenter: "M12 4v16M7 7h10v3H7zM9 14h6v3H9z",
  alignRight: "M19 4v16M6 7h10v3H6zM10 14h6v3h-6z",
  alignTop: "M4 5h16M7 8h3v10H7zM14 8h3v6h-3z",
  alignMiddle: "M4 12h16M7 7h3v10H7zM14 9h3v6h-3z",
  alignBottom: "M4 19h16M7 6h3v10H7zM14 10h3v6h-3z",
  distributeH: "M4 4v16M20 4v16M9 8h2v8H9zM13 8h2v8h-2z",
  distributeV: "M4 4h16M4 20h16M8 9h8v2H8zM8 13h8v2H8z",
  duplicate: "M8 8h11v11H8zM5 5h11v2H7v9H5z",
  delete: "M6 7h12M10 7V5h4v2M8 7l1 12h6l1-12",
};

function glyph(name) {
  return svg("svg", { viewBox: "0 0 24 24", width: 18, height: 18, "aria-hidden": "true", focusable: "false", class: "dz-icon" }, svg("path", { d: PATHS[name] }));
}

/** A toolbar button: `name` for people (with its shortcut in the tooltip). */
export function toolButton(iconName, name, action, shortcut = "") {
  return h(
    "button",
    { type: "button", class: "dz-tb", "aria-label": name, title: shortcut ? `${name} (${shortcut})` : name, onclick: action, tabindex: "-1" },
    glyph(iconName),
  );
}

function group(label, ...items) {
  return h("div", { role: "group", class: "dz-tb-group", "aria-label": label }, items);
}

/**
 * The toolbar for `actions` (functions by name); answers {element, update(state)} where state
 * says what can be done now.
 */
export function toolbar(actions, mod) {
  const buttons = {
    undo: toolButton("undo", "Undo", actions.undo, `${mod}+Z`),
    redo: toolButton("redo", "Redo", actions.redo, `${mod}+Shift+Z`),
    zoomOut: toolButton("zoomOut", "Zoom out", actions.zoomOut, "-"),
    zoomIn: toolButton("zoomIn", "Zoom in", actions.zoomIn, "+"),
    fit: toolButton("fit", "Fit the label", actions.fit, "0"),
    rotate: toolButton("rotate", "Rotate 90° clockwise", actions.rotate, "R"),
    duplicate: toolButton("duplicate", "Duplicate", actions.duplicate, `${mod}+D`),
    remove: toolButton("delete", "Delete", actions.remove, "Delete"),
    front: toolButton("front", "Bring to front", actions.front, `${mod}+Shift+]`),
    back: toolButton("back", "Send to back", actions.back, `${mod}+Shift+[`),
    alignLeft: toolButton("alignLeft", "Align left", () => actions.align("left")),
    alignCenter: toolButton("alignCenter", "Align centres", () => actions.align("center")),
    alignRight: toolButton("alignRight", "Align right", () => actions.align("right")),
    alignTop: toolButton("alignTop", "Align top", () => actions.align("top")),
    alignMiddle: toolButton("alignMiddle", "Align middles", () => actions.align("middle")),
    alignBottom: toolButton("alignBottom", "Align bottom", () => actions.align("bottom")),
    distributeH: toolButton("distributeH", "Distribute across", () => actions.distribute("horizontal")),
    distributeV: toolButton("distributeV", "Distribute down", () => actions.distribute("vertical")),
  };
  const zoom = select(
    ZOOM_STEPS.map((step) => [String(step), `${Math.round(step * 100)} %`]),
    { class: "dz-zoom", "aria-label": "Zoom", tabindex: "-1" },
  );
  zoom.addEventListener("change", () => actions.zoomTo(Number(zoom.value)));
  const grid = h("input", { type: "checkbox", id: "dz-grid", checked: true, tabindex: "-1" });
  const snapObjects = h("input", { type: "checkbox", id: "dz-snap", checked: true, tabindex: "-1" });
  const gridSize = select(
    [["0.5", "0.5 mm"], ["1", "1 mm"], ["2", "2 mm"], ["2.5", "2.5 mm"], ["5", "5 mm"], ["10", "10 mm"]],
    { value: "1", "aria-label": "Grid step", class: "dz-grid-size", tabindex: "-1" },
  );
  const gridChanged = () => actions.grid(grid.checked, Number(gridSize.value), snapObjects.checked);
  grid.addEventListener("change", gridChanged);
  gridSize.addEventListener("change", gridChanged);
  snapObjects.addEventListener("change", gridChanged);
  const element = h(
    "div",
    { class: "dz-toolbar", role: "toolbar", "aria-label": "Designer tools" },
    group("History", buttons.undo, buttons.redo),
    group("Zoom", buttons.zoomOut, zoom, buttons.zoomIn, buttons.fit),
    group("Object", buttons.rotate, buttons.duplicate, buttons.remove, buttons.front, buttons.back),
    group("Align", buttons.alignLeft, buttons.alignCenter, buttons.alignRight, buttons.alignTop, buttons.alignMiddle, buttons.alignBottom),
    group("Distribute", buttons.distributeH, buttons.distributeV),
    group(
      "Grid",
      h("label", { class: "dz-check", for: "dz-grid" }, grid, "Grid"),
      gridSize,
      h("label", { class: "dz-check", for: "dz-snap" }, snapObjects, "Snap to objects"),
    ),
  );
  const controls = () => [...element.querySelectorAll("button, select, input")];
  // One Tab stop; the arrow keys move along the toolbar.
  let current = buttons.undo;
  current.tabIndex = 0;
  element.addEventListener("focusin", (event) => {
    if (!controls().includes(event.target)) return;
    current.tabIndex = -1;
    current = event.target;
    current.tabIndex = 0;
  });
  element.addEventListener("keydown", (event) => {
    if (!["ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) return;
    if (event.target.tagName === "SELECT" && event.key.startsWith("Arrow") && event.altKey) return;
    const list = controls();
    const at = list.indexOf(document.activeElement);
    if (at < 0) return;
    event.preventDefault();
    event.stopPropagation();
    const next = { ArrowLeft: at - 1, ArrowRight: at + 1, Home: 0, End: list.length - 1 }[event.key];
    list[(next + list.length) % list.length].focus();
  });
  const enable = (button, on) => {
    if (on) button.removeAttribute("aria-disabled");
    else button.setAttribute("aria-disabled", "true");
  };
  return {
    element,
    update({ canUndo, canRedo, undoLabel, redoLabel, selected, zoom: level }) {
      enable(buttons.undo, canUndo);
      enable(buttons.redo, canRedo);
      buttons.undo.title = canUndo ? `Undo: ${undoLabel} (${mod}+Z)` : "Nothing to undo";
      buttons.redo.title = canRedo ? `Redo: ${redoLabel} (${mod}+Shift+Z)` : "Nothing to redo";
      for (const name of ["rotate", "duplicate", "remove", "front", "back", "alignLeft", "alignCenter", "alignRight", "alignTop", "alignMiddle", "alignBottom"]) {
        enable(buttons[name], selected > 0);
      }
      enable(buttons.distributeH, selected >= 3);
      enable(buttons.distributeV, selected >= 3);
      const nearest = ZOOM_STEPS.reduce((a, b) => (Math.abs(b - level) < Math.abs(a - level) ? b : a));
      if (Math.abs(nearest - level) < 0.005) zoom.value = String(nearest);
      else {
        let custom = zoom.querySelector("option[data-custom]");
        if (!custom) {
          custom = h("option", { "data-custom": "1" });
          zoom.prepend(custom);
        }
        custom.value = String(level);
        custom.textContent = `${Math.round(level * 100)} %`;
        zoom.value = String(level);
      }
    },
  };
}
