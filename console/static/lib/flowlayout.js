// Auto-layout of a flow with dagre (vendored): triggers on the left, records flowing right,
// crossings kept few. Answers each node's top-left corner, snapped to the canvas grid.

import { vendor } from "./vendor.js";

const GRID = 10;

/** nodes: [{id, width, height}], edges: [{source, target}] → Map(id → {x, y}). */
export async function layoutOf(nodes, edges) {
  const dagre = await vendor("dagre");
  const graph = new dagre.graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: "LR", nodesep: 26, ranksep: 60, edgesep: 14, marginx: 40, marginy: 40 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const node of nodes) graph.setNode(node.id, { width: node.width, height: node.height });
  edges.forEach((edge, index) => {
    if (graph.hasNode(edge.source) && graph.hasNode(edge.target)) graph.setEdge(edge.source, edge.target, {}, `w${index}`);
  });
  dagre.layout(graph);
  const positions = new Map();
  for (const node of nodes) {
    const placed = graph.node(node.id);
    const snap = (value) => Math.round(value / GRID) * GRID;
    positions.set(node.id, { x: snap(placed.x - node.width / 2), y: snap(placed.y - node.height / 2) });
  }
  return positions;
}
