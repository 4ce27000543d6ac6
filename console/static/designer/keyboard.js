// The designer's keyboard: one table of shortcuts, read when a key goes down anywhere in the
// designer. Editing keys (arrows, Delete, copy and paste) act on the selection only from the
// canvas or the object list; nothing fires while someone types into a field.

export const MOD = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent) ? "⌘" : "Ctrl";

export function typing(target) {
  if (!target || !(target instanceof Element)) return false;
  if (target.isContentEditable) return true;
  if (target.tagName === "TEXTAREA" || target.tagName === "SELECT") return true;
  if (target.tagName === "INPUT") return !["checkbox", "radio", "button", "submit", "range"].includes(target.type);
  return false;
}

/** [keys as people read them, what they do]: the list the help dialog and the docs show. */
export const SHORTCUTS = [
  [`${MOD}+Z`, "Undo"],
  [`${MOD}+Shift+Z, ${MOD}+Y`, "Redo"],
  [`${MOD}+S`, "Save as a new version"],
  ["Arrow keys", "Move the selection by one printer dot"],
  ["Shift+arrow keys", "Move the selection by 1 mm"],
  ["Delete, Backspace", "Delete the selection"],
  [`${MOD}+D`, "Duplicate the selection"],
  [`${MOD}+C, ${MOD}+X, ${MOD}+V`, "Copy, cut, paste (also into another label)"],
  [`${MOD}+A`, "Select every object"],
  ["Escape", "Select nothing"],
  ["R, Shift+R", "Rotate 90° clockwise, anticlockwise"],
  [`${MOD}+]  ${MOD}+[`, "Bring forward, send backward"],
  [`${MOD}+Shift+]  ${MOD}+Shift+[`, "Bring to front, send to back"],
  ["+  −", "Zoom in, out"],
  ["0, 1", "Fit the label, zoom 100 % (its real size)"],
  ["Shift+click, drag on the paper", "Add to the selection, select with a rubber band"],
  ["?", "These shortcuts"],
];

/**
 * Binds the shortcuts to `root`. `actions` has a function per action; `onCanvas()` says
 * whether focus is where editing keys act (the canvas or the object list).
 */
export function bindKeys(root, actions, onCanvas) {
  const handler = (event) => {
    const mod = event.ctrlKey || event.metaKey;
    const key = event.key;
    const inField = typing(event.target);
    const run = (name, ...args) => {
      event.preventDefault();
      event.stopPropagation();
      actions[name](...args);
    };
    if (mod && !event.altKey) {
      const lower = key.toLowerCase();
      if (lower === "s") return run("save");
      if (inField) return undefined; // a field's own undo, copy and paste
      if (lower === "z") return run(event.shiftKey ? "redo" : "undo");
      if (lower === "y") return run("redo");
      if (!onCanvas()) return undefined;
      if (lower === "d") return run("duplicate");
      if (lower === "c") return run("copy");
      if (lower === "x") return run("cut");
      if (lower === "v") return run("paste");
      if (lower === "a") return run("selectAll");
      if (key === "]" || key === "}") return run(event.shiftKey ? "front" : "forward");
      if (key === "[" || key === "{") return run(event.shiftKey ? "back" : "backward");
      return undefined;
    }
    if (inField || event.altKey) return undefined;
    if (key === "?") return run("help");
    if (!onCanvas()) return undefined;
    const step = event.shiftKey ? "mm" : "dot";
    if (key === "ArrowLeft") return run("nudge", -1, 0, step);
    if (key === "ArrowRight") return run("nudge", 1, 0, step);
    if (key === "ArrowUp") return run("nudge", 0, -1, step);
    if (key === "ArrowDown") return run("nudge", 0, 1, step);
    if (key === "Delete" || key === "Backspace") return run("remove");
    if (key === "Escape") return run("selectNone");
    if (key === "r" || key === "R") return run("rotate", !event.shiftKey);
    if (key === "+" || key === "=") return run("zoomIn");
    if (key === "-" || key === "_") return run("zoomOut");
    if (key === "0") return run("fit");
    if (key === "1") return run("zoomTo", 1);
    return undefined;
  };
  root.addEventListener("keydown", handler);
  return () => root.removeEventListener("keydown", handler);
}
