// The canvas with the keyboard alone (X6's keyboard plugin, bound to the focused canvas): arrow
// keys go from node to node, Shift+arrows move the chosen nodes, Delete removes them, the usual
// shortcuts copy, cut, paste, undo and redo, Enter opens the settings, W the wires.

const STEP = 10;
const BIG_STEP = 50;

export const SHORTCUTS = [
  ["Arrow keys", "go to the nearest node that way"],
  ["Shift + arrows", "move the chosen nodes (Alt: further)"],
  ["Enter", "edit the chosen node's settings"],
  ["W", "wire the chosen node (its wires in the settings)"],
  ["Delete", "delete the chosen nodes and their wires"],
  ["Ctrl + A", "choose every node"],
  ["Ctrl + C / X / V", "copy, cut, paste (pasted nodes get new ids)"],
  ["Ctrl + Z, Ctrl + Shift + Z", "undo, redo"],
  ["+ / − / 0", "zoom in, out, fit"],
  ["Ctrl + S", "save a version"],
  ["Escape", "choose nothing"],
];

function centre(node) {
  const box = node.getBBox();
  return { x: box.x + box.width / 2, y: box.y + box.height / 2 };
}

/** The node nearest to `from` in a direction, favouring those straight that way. */
function nearest(nodes, from, direction) {
  const origin = centre(from);
  let best = null;
  let bestScore = Infinity;
  for (const node of nodes) {
    if (node === from) continue;
    const c = centre(node);
    const dx = c.x - origin.x;
    const dy = c.y - origin.y;
    const [ahead, aside] = { right: [dx, dy], left: [-dx, dy], down: [dy, dx], up: [-dy, dx] }[direction];
    if (ahead <= 1) continue;
    const score = ahead + 2.5 * Math.abs(aside);
    if (score < bestScore) {
      best = node;
      bestScore = score;
    }
  }
  return best;
}

/** Binds the keys on `canvas` (only those that change nothing unless `editable`); answers
 * {dispose}. */
export function canvasKeys(canvas, { editable, onEdit, onWire, onSave, announce }) {
  const graph = canvas.graph;
  const { selection, clipboard, history, keyboard } = canvas.plugins;
  const chosen = () => selection.getSelectedCells().filter((c) => c.isNode());
  const say = (text) => announce?.(text);
  const bind = (keys, handler) =>
    keyboard.bindKey(keys, (event) => {
      event.preventDefault?.();
      handler(event);
      return false;
    });

  bind("escape", () => selection.clean());
  bind("enter", () => chosen().length === 1 && onEdit?.());
  bind(["+", "=", "plus"], () => canvas.zoom(0.15));
  bind("-", () => canvas.zoom(-0.15));
  bind("0", () => canvas.fit());
  for (const direction of ["up", "down", "left", "right"]) {
    bind(direction, () => {
      const nodes = graph.getNodes();
      if (!nodes.length) return;
      const [from] = chosen();
      const next = from ? nearest(nodes, from, direction) : [...nodes].sort((a, b) => a.getBBox().x - b.getBBox().x || a.getBBox().y - b.getBBox().y)[0];
      if (!next) return;
      canvas.select([next.id]);
      say(`${next.id}: ${next.getData()?.type}`);
    });
  }
  if (!editable) return { dispose: () => keyboard.clear() };

  bind(["del", "backspace"], () => {
    const cells = selection.getSelectedCells();
    if (!cells.length) return;
    const nodes = cells.filter((c) => c.isNode()).length;
    graph.removeCells(cells);
    say(nodes ? `Deleted ${nodes} node${nodes > 1 ? "s" : ""}` : "Deleted the wire");
  });
  bind(["ctrl+c", "meta+c"], () => {
    const cells = selection.getSelectedCells();
    if (!cells.length) return;
    clipboard.copy(cells);
    say(`Copied ${cells.filter((c) => c.isNode()).length} nodes`);
  });
  bind(["ctrl+x", "meta+x"], () => {
    const cells = selection.getSelectedCells();
    if (!cells.length) return;
    clipboard.cut(cells);
    say("Cut");
  });
  bind(["ctrl+v", "meta+v"], () => {
    if (clipboard.isEmpty()) return;
    const cells = clipboard.paste({ offset: 30 });
    selection.clean();
    selection.select(cells);
    say(`Pasted ${cells.filter((c) => c.isNode()).map((c) => c.id).join(", ")}`);
  });
  bind(["ctrl+z", "meta+z"], () => history.undo());
  bind(["ctrl+shift+z", "meta+shift+z", "ctrl+y"], () => history.redo());
  bind(["ctrl+a", "meta+a"], () => {
    selection.clean();
    selection.select(graph.getNodes());
    say(`${graph.getNodes().length} nodes chosen`);
  });
  bind("w", () => chosen().length === 1 && onWire?.());
  bind(["ctrl+s", "meta+s"], () => onSave?.());
  for (const direction of ["up", "down", "left", "right"]) {
    const move = (distance) => () => {
      const nodes = chosen();
      if (!nodes.length) return;
      const [dx, dy] = { right: [distance, 0], left: [-distance, 0], down: [0, distance], up: [0, -distance] }[direction];
      graph.batchUpdate("move", () => nodes.forEach((node) => node.translate(dx, dy)));
    };
    bind(`shift+${direction}`, move(STEP));
    bind(`shift+alt+${direction}`, move(BIG_STEP));
  }
  return { dispose: () => keyboard.clear() };
}
