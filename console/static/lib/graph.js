// A flow document as a read-only graph: nodes in columns by their distance from a trigger, wires
// as arrows. Each node is focusable; choosing one reports it (for a details panel).

import { svg } from "./dom.js";

const NODE_W = 180;
const NODE_H = 50;
const GAP_X = 70;
const GAP_Y = 26;
const PAD = 20;

/** Every wire of the document: {from, to, label}. */
export function wiresOf(document) {
  const ids = new Set((document.nodes || []).map((n) => n.id));
  const wires = [];
  for (const node of document.nodes || []) {
    for (const to of node.wires || []) wires.push({ from: node.id, to, label: "" });
    (node.cases || []).forEach((item, index) => {
      for (const to of item.wires || []) wires.push({ from: node.id, to, label: `case ${index + 1}` });
    });
    for (const to of node.otherwise || []) wires.push({ from: node.id, to, label: "otherwise" });
  }
  return wires.filter((w) => ids.has(w.to));
}

function layers(nodes, wires) {
  const incoming = new Map(nodes.map((n) => [n.id, 0]));
  for (const w of wires) incoming.set(w.to, (incoming.get(w.to) || 0) + 1);
  const depth = new Map(nodes.map((n) => [n.id, 0]));
  // Longest path from the sources, bounded so that a cycle cannot loop forever.
  for (let round = 0; round < nodes.length; round += 1) {
    let changed = false;
    for (const w of wires) {
      const next = depth.get(w.from) + 1;
      if (next > depth.get(w.to) && next < nodes.length) {
        depth.set(w.to, next);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return depth;
}

function category(type) {
  return String(type || "").split(".")[0];
}

/**
 * The graph as an <svg>. `findings` mark nodes with errors; `onSelect(node)` is called when a
 * node is clicked or focused.
 */
export function flowGraph(document, { findings = [], onSelect } = {}) {
  const nodes = document.nodes || [];
  const wires = wiresOf(document);
  const depth = layers(nodes, wires);
  const columns = new Map();
  for (const node of nodes) {
    const d = depth.get(node.id);
    if (!columns.has(d)) columns.set(d, []);
    columns.get(d).push(node);
  }
  const position = new Map();
  let maxRows = 1;
  for (const [d, column] of columns) {
    maxRows = Math.max(maxRows, column.length);
    column.forEach((node, row) => {
      position.set(node.id, { x: PAD + d * (NODE_W + GAP_X), y: PAD + row * (NODE_H + GAP_Y) });
    });
  }
  const width = PAD * 2 + Math.max(1, columns.size) * (NODE_W + GAP_X) - GAP_X;
  const height = PAD * 2 + maxRows * (NODE_H + GAP_Y) - GAP_Y;
  const errors = new Set(findings.filter((f) => f.severity === "error" && f.node_id).map((f) => f.node_id));

  const markerId = `arrow-${Math.random().toString(36).slice(2, 8)}`;
  const root = svg(
    "svg",
    {
      class: "graph",
      width,
      height,
      viewBox: `0 0 ${width} ${height}`,
      role: "group",
      "aria-label": `Flow graph: ${nodes.length} nodes, ${wires.length} wires`,
    },
    svg(
      "defs",
      {},
      svg(
        "marker",
        { id: markerId, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
        svg("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#7d8794" }),
      ),
    ),
  );
  for (const wire of wires) {
    const a = position.get(wire.from);
    const b = position.get(wire.to);
    const x1 = a.x + NODE_W;
    const y1 = a.y + NODE_H / 2;
    const x2 = b.x;
    const y2 = b.y + NODE_H / 2;
    const back = x2 <= x1;
    const bend = back ? 90 : Math.max(30, (x2 - x1) / 2);
    const d = back
      ? `M ${x1} ${y1} C ${x1 + bend} ${y1 + 60}, ${x2 - bend} ${y2 + 60}, ${x2} ${y2}`
      : `M ${x1} ${y1} C ${x1 + bend} ${y1}, ${x2 - bend} ${y2}, ${x2} ${y2}`;
    root.appendChild(svg("path", { class: "wire", d, "marker-end": `url(#${markerId})` }, svg("title", {}, `${wire.from} → ${wire.to}`)));
    if (wire.label) {
      const t = back ? 0.5 : 0.6;
      root.appendChild(svg("text", { class: "wire-label", x: x1 + (x2 - x1) * t - 18, y: y1 + (y2 - y1) * t - 6 }, wire.label));
    }
  }
  const groups = [];
  for (const node of nodes) {
    const { x, y } = position.get(node.id);
    const label = `${node.id}: ${node.type}${errors.has(node.id) ? ", has errors" : ""}`;
    const group = svg(
      "g",
      {
        class: `node ${category(node.type)}${errors.has(node.id) ? " has-error" : ""}`,
        transform: `translate(${x} ${y})`,
        tabindex: 0,
        role: "button",
        "aria-label": label,
        "data-node-id": node.id,
      },
      svg("rect", { width: NODE_W, height: NODE_H, rx: 8 }),
      svg("text", { x: 10, y: 20 }, truncate(node.id, 24)),
      svg("text", { x: 10, y: 38, class: "type" }, node.type),
    );
    const choose = () => {
      for (const other of groups) other.classList.remove("selected");
      group.classList.add("selected");
      onSelect?.(node);
    };
    group.addEventListener("click", choose);
    group.addEventListener("focus", choose);
    group.addEventListener("keydown", (event) => {
      if (event.key === "Enter" || event.key === " ") {
        event.preventDefault();
        choose();
      }
    });
    groups.push(group);
    root.appendChild(group);
  }
  return root;
}

function truncate(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}
