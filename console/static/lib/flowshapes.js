// How the flow editor's canvas looks to X6 (vendored): the node and wire shapes, readable ids for
// nodes made by a paste or a drop, X6 kept from inserting <style> elements (the console's CSP
// refuses them; flow-editor.css holds X6's styles), and a node dressed from its data.

import { category, NODE_WIDTH, newNodeId } from "./flowcells.js";

const STRIPE = { trigger: "#0b62c4", logic: "#7048c0", action: "#1a7f37", unknown: "#8a96a6" };
// Changes that only show something (findings, a trace step, a diff): never undone or redone.
export const VISUAL = { visual: true };

let setUp = null;
let idSource = null; // the graph being edited: new nodes' ids must not repeat its ids
const reserved = new Set(); // ids handed out, used or not (a copy not pasted yet)

/** The ids a new node must not take in `graph`. */
export function takenIds(graph) {
  return new Set([...graph.getNodes().map((n) => n.id), ...reserved]);
}

export function reserve(id) {
  reserved.add(id);
  return id;
}

/** `graph` is the one whose copies and drops get readable ids (null: none, if it is `was`). */
export function useIdsOf(graph, was) {
  if (graph || idSource === was) idSource = graph;
}

/** X6 once per page: our node and wire shapes, ids new nodes get, no injected <style>. */
export function setUpX6(X6) {
  if (setUp) return setUp;
  // The page's CSP allows no <style> element: X6's styles are in flow-editor.css instead.
  X6.Config.autoInsertCSS = false;
  const uuid = X6.Cell.generateId.bind(X6.Cell);
  // A node made by a paste or a drop gets a readable id ("set3"), never one used before.
  X6.Cell.generateId = (metadata) => {
    const type = metadata?.data?.type;
    if (!type || !idSource) return uuid(metadata);
    return reserve(newNodeId(type, takenIds(idSource)));
  };
  const port = (group) => ({
    position: group === "in" ? "left" : "right",
    label: { position: { name: group === "in" ? "right" : "left", args: { x: -9, y: 0 } } },
    attrs: {
      circle: { r: 6, magnet: group === "in" ? "passive" : true, class: `fe-port fe-port-${group}` },
      text: { class: "fe-port-label", fontSize: 10 },
    },
  });
  X6.Graph.registerNode(
    "etikett-flow-node",
    {
      inherit: "rect",
      width: NODE_WIDTH,
      height: 50,
      markup: [
        { tagName: "rect", selector: "body", className: "fe-body" },
        { tagName: "rect", selector: "stripe", className: "fe-stripe" },
        { tagName: "text", selector: "title", className: "fe-title" },
        { tagName: "text", selector: "subtitle", className: "fe-subtitle" },
        { tagName: "text", selector: "badge", className: "fe-badge" },
      ],
      attrs: {
        body: { refWidth: "100%", refHeight: "100%", rx: 7, ry: 7 },
        stripe: { width: 7, refHeight: "100%", rx: 3, ry: 3 },
        title: { refX: 17, refY: 18, fontSize: 13, textAnchor: "start", textVerticalAnchor: "middle" },
        subtitle: { refX: 17, refY: 36, fontSize: 11, textAnchor: "start", textVerticalAnchor: "middle" },
        badge: { refX: "100%", refX2: -24, refY: 35, fontSize: 12, textAnchor: "end", textVerticalAnchor: "middle" },
      },
      ports: { groups: { in: port("in"), out: port("out") } },
    },
    true,
  );
  X6.Graph.registerEdge(
    "etikett-wire",
    {
      inherit: "edge",
      connector: { name: "smooth", args: { direction: "H" } },
      attrs: {
        line: { stroke: "#7d8794", strokeWidth: 2, targetMarker: { name: "block", width: 8, height: 6 }, class: "fe-wire" },
      },
      zIndex: 0,
    },
    true,
  );
  setUp = X6;
  return X6;
}

/** Runs `make` while `document.createElement("style")` makes an inert <template> instead. X6's
 * plugins (selection, snapline, drag and drop) insert their CSS as <style> elements whatever
 * X6.Config.autoInsertCSS says, and the page's CSP refuses inline styles; flow-editor.css holds
 * the same rules, so what they insert is never needed. */
export function withoutStyleElements(make) {
  const create = document.createElement;
  document.createElement = function createElement(tag, options) {
    return create.call(this, String(tag).toLowerCase() === "style" ? "template" : tag, options);
  };
  try {
    return make();
  } finally {
    document.createElement = create;
  }
}

function truncate(text, n) {
  return text.length > n ? `${text.slice(0, n - 1)}…` : text;
}

/** How a node looks from its data: title (name or id), type, stripe colour, ports. */
export function dress(node) {
  const { type, name, fields } = node.getData() || {};
  node.setAttrs(
    {
      title: { text: truncate(name || node.id, 21) },
      subtitle: { text: type },
      stripe: { fill: STRIPE[category(type)] },
    },
    VISUAL,
  );
  return { type, name, fields };
}
