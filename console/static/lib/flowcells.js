// A flow document as the editor's cells and back: each node a cell with its ports (an input,
// and an output per route a record can take: `out`, or a switch's cases and `otherwise`), each
// wire an edge from an output port to an input. Plain data, no graph library: the canvas
// (flowcanvas.js) adds these cells to X6 and reads them back with X6's own toJSON().

export const NODE_WIDTH = 180;
export const NODE_HEIGHT = 50;
const PORT_ROW = 22;

// What the editor owns besides a node's type fields; everything else goes to the form.
const OWN = new Set(["id", "type", "name", "wires", "ui"]);

export function category(type) {
  const head = String(type || "").split(".")[0];
  return ["trigger", "logic", "action"].includes(head) ? head : "unknown";
}

export const isTrigger = (type) => category(type) === "trigger";
export const isSwitch = (type) => type === "logic.switch";

/** A readable id for a new node of `type` ("set3"), never one in `taken`. */
export function newNodeId(type, taken) {
  const stem = String(type || "node").split(".").pop().replace(/[^A-Za-z0-9_-]/g, "") || "node";
  for (let n = 1; ; n += 1) {
    const id = `${stem}${n}`;
    if (!taken.has(id)) return id;
  }
}

let caseSerial = 0;
/** A port key for a new switch case: stays with the case when cases move or go. */
export function newCaseKey() {
  caseSerial += 1;
  return `k${Date.now().toString(36)}${caseSerial}`;
}

/** The output ports of a node: [{id, label}] ("out"; a switch: one per case, then "otherwise"). */
export function outputsOf(type, fields) {
  if (!isSwitch(type)) return [{ id: "out", label: "" }];
  const cases = Array.isArray(fields?.cases) ? fields.cases : [];
  return [
    ...cases.map((item, index) => ({ id: `case:${item?._port}`, label: String(index + 1), title: item?.when || "" })),
    { id: "otherwise", label: "else", title: "otherwise" },
  ];
}

export function heightOf(type, fields) {
  return Math.max(NODE_HEIGHT, outputsOf(type, fields).length * PORT_ROW + 10);
}

/** The X6 port items of a node. */
export function portItems(type, fields) {
  const items = isTrigger(type) ? [] : [{ id: "in", group: "in" }];
  for (const output of outputsOf(type, fields)) {
    items.push({
      id: output.id,
      group: "out",
      attrs: { text: { text: output.label } },
      data: { title: output.title },
    });
  }
  return items;
}

/** The form's value for a node: its type fields, a switch's cases without their wires (drawn,
 * not typed) but each with the `_port` key its output keeps. */
function formFields(node, keys) {
  const fields = {};
  for (const [key, value] of Object.entries(node)) {
    if (!OWN.has(key) && !(isSwitch(node.type) && key === "otherwise")) fields[key] = structuredClone(value);
  }
  if (isSwitch(node.type) && Array.isArray(fields.cases)) {
    fields.cases = fields.cases.map((item, index) => {
      const { wires, ...rest } = item && typeof item === "object" ? item : {};
      return { ...rest, _port: keys[index] };
    });
  }
  return fields;
}

/** The cells of a document: {nodes, edges} as X6 metadata (positions where the document has
 * them; `placed` says whether every node had one). `keysOf(id)` gives the port keys a switch
 * already has, so that its cases keep their outputs. */
export function cellsOf(document, keysOf = () => []) {
  const nodes = [];
  const edges = [];
  const list = Array.isArray(document?.nodes) ? document.nodes : [];
  const ids = new Set(list.map((n) => n.id));
  let placed = true;
  list.forEach((node, index) => {
    const known = keysOf(node.id) || [];
    const keys = (Array.isArray(node.cases) ? node.cases : []).map((_, i) => known[i] || newCaseKey());
    const fields = formFields(node, keys);
    const ui = node.ui && Number.isFinite(node.ui.x) && Number.isFinite(node.ui.y) ? node.ui : null;
    if (!ui) placed = false;
    nodes.push({
      id: node.id,
      shape: "etikett-flow-node",
      x: ui ? ui.x : 0,
      y: ui ? ui.y : 0,
      width: NODE_WIDTH,
      height: heightOf(node.type, fields),
      ports: portItems(node.type, fields),
      data: {
        type: node.type,
        name: node.name || "",
        fields,
        seq: index,
        otherwise: isSwitch(node.type) && Array.isArray(node.otherwise),
      },
    });
    const wire = (port, target) => {
      if (ids.has(target)) edges.push({ shape: "etikett-wire", source: { cell: node.id, port }, target: { cell: target, port: "in" } });
    };
    for (const target of node.wires || []) wire("out", target);
    (Array.isArray(node.cases) ? node.cases : []).forEach((item, index) => {
      for (const target of item?.wires || []) wire(`case:${keys[index]}`, target);
    });
    for (const target of Array.isArray(node.otherwise) ? node.otherwise : []) wire("otherwise", target);
  });
  return { nodes, edges, placed };
}

/** The document of cells as X6's toJSON() gives them, over `base` (samples, description and
 * anything else of the document the canvas does not draw). Nodes keep their order; new ones
 * follow in the order they were made. */
export function documentOf(cells, base = {}) {
  const nodes = cells.filter((c) => c.shape === "etikett-flow-node");
  const edges = cells.filter((c) => c.shape === "etikett-wire" && c.source?.cell && c.target?.cell);
  const present = new Set(nodes.map((n) => n.id));
  const from = new Map();
  for (const edge of edges) {
    if (!present.has(edge.target.cell)) continue;
    const key = `${edge.source.cell} ${edge.source.port || "out"}`;
    if (!from.has(key)) from.set(key, []);
    if (!from.get(key).includes(edge.target.cell)) from.get(key).push(edge.target.cell);
  }
  const targets = (id, port) => [...(from.get(`${id} ${port}`) || [])];
  const ordered = [...nodes].sort((a, b) => (a.data?.seq ?? 0) - (b.data?.seq ?? 0));
  const document = { ...structuredClone(base), nodes: [] };
  for (const cell of ordered) {
    const { type, name, fields = {}, otherwise } = cell.data || {};
    const node = { id: cell.id, type };
    if (name) node.name = name;
    for (const [key, value] of Object.entries(fields)) {
      if (value !== undefined && !OWN.has(key)) node[key] = structuredClone(value);
    }
    if (isSwitch(type)) {
      node.cases = (Array.isArray(fields.cases) ? fields.cases : []).map((item) => {
        const { _port, ...rest } = item || {};
        return { ...rest, wires: targets(cell.id, `case:${_port}`) };
      });
      const rest = targets(cell.id, "otherwise");
      if (rest.length || otherwise) node.otherwise = rest;
      node.wires = [];
    } else {
      node.wires = targets(cell.id, "out");
    }
    node.ui = { x: Math.round(cell.position?.x ?? 0), y: Math.round(cell.position?.y ?? 0) };
    document.nodes.push(node);
  }
  return document;
}

/** Which wire of `document` a JSON Pointer into it names, as {source, port, target}, or null:
 * `/nodes/2/wires/0`, `/nodes/4/cases/1/wires/0`, `/nodes/4/otherwise/0`. */
export function wireAt(document, pointer, keysOf) {
  const parts = String(pointer || "").split("/").slice(1);
  if (parts[0] !== "nodes") return null;
  const node = document.nodes?.[Number(parts[1])];
  if (!node) return null;
  if (parts[2] === "wires" && parts[3] !== undefined) {
    return { source: node.id, port: "out", target: node.wires?.[Number(parts[3])] };
  }
  if (parts[2] === "otherwise" && parts[3] !== undefined) {
    return { source: node.id, port: "otherwise", target: node.otherwise?.[Number(parts[3])] };
  }
  if (parts[2] === "cases" && parts[4] === "wires" && parts[5] !== undefined) {
    const index = Number(parts[3]);
    const key = keysOf?.(node.id)?.[index];
    return { source: node.id, port: key ? `case:${key}` : null, target: node.cases?.[index]?.wires?.[Number(parts[5])] };
  }
  return null;
}
