// The flow editor's canvas on AntV X6 (vendored): nodes with their ports, wires dragged from an
// output to an input, and X6's own selection (rubberband, several at once), snaplines,
// clipboard, undo history and keyboard bindings. The document lives in the cells: a node's
// settings in its data, its position in the cell, each wire an edge (flowcells.js converts).

import { h } from "./dom.js";
import { cellsOf, documentOf, heightOf, isSwitch, newNodeId, NODE_WIDTH, portItems, category } from "./flowcells.js";
import { layoutOf } from "./flowlayout.js";
import { dress, reserve, setUpX6, takenIds, useIdsOf, withoutStyleElements } from "./flowshapes.js";
import { vendor } from "./vendor.js";

const GRID = 10;

/**
 * The canvas in `host`: `{graph, load, document, …}`. Options: `mode` "edit", "view" (choose
 * nodes, change nothing) or "diff" (a version comparison: look only),
 * `onChange()` after any change of the document, `onSelect(ids)` when the selection changes,
 * `describe(node) → {label, …}` for each node's accessible name.
 */
export async function flowCanvas(host, { mode = "edit", onChange, onSelect, describe } = {}) {
  const readOnly = mode !== "edit";
  const X6 = setUpX6(await vendor("x6"));
  const container = h("div", { class: "fe-graph" });
  host.append(container);
  const graph = new X6.Graph({
    container,
    autoResize: true,
    // Nodes snap to the grid, but it is not drawn: X6 draws it anew at every zoom step, which
    // halved the frame rate of zooming a 100-node flow (bench/flow_editor_bench.py).
    grid: { size: GRID, visible: false },
    background: { color: "#f7f9fb" },
    panning: { enabled: true, eventTypes: readOnly ? ["leftMouseDown", "mouseWheel"] : ["rightMouseDown", "mouseWheel"] },
    mousewheel: { enabled: true, modifiers: ["ctrl", "meta"], zoomAtMousePosition: true, minScale: 0.2, maxScale: 2.5 },
    scaling: { min: 0.2, max: 2.5 },
    interacting: readOnly ? { nodeMovable: false, edgeMovable: false, magnetConnectable: false } : { edgeLabelMovable: false },
    preventDefaultContextMenu: true,
    connecting: {
      snap: { radius: 28 },
      allowBlank: false,
      allowLoop: false,
      allowNode: false,
      allowEdge: false,
      allowMulti: "withPort",
      highlight: true,
      anchor: "center",
      connectionPoint: "anchor",
      connector: { name: "smooth", args: { direction: "H" } },
      createEdge: () => graph.createEdge({ shape: "etikett-wire" }),
      validateMagnet: ({ magnet }) => magnet.getAttribute("port-group") === "out",
      validateConnection: ({ sourceCell, targetCell, targetPort, sourcePort }) =>
        Boolean(sourceCell && targetCell && sourceCell !== targetCell && targetPort === "in" && sourcePort !== "in"),
    },
    highlighting: {
      magnetAvailable: { name: "className", args: { className: "fe-magnet-available" } },
      magnetAdsorbed: { name: "className", args: { className: "fe-magnet-adsorbed" } },
    },
  });
  let dnd = null;
  // X6's plugins, each used through its own instance (the UMD build adds no Graph methods).
  const plugins = { selection: null, history: null, clipboard: null, keyboard: null };
  if (mode === "view") {
    withoutStyleElements(() => {
      plugins.selection = new X6.Selection({ enabled: true, multiple: false, rubberband: false, movable: false, showNodeSelectionBox: false, showEdgeSelectionBox: false, pointerEvents: "none" });
      plugins.keyboard = new X6.Keyboard({ enabled: true });
      graph.use(plugins.selection).use(plugins.keyboard);
    });
  }
  if (mode === "edit") {
    withoutStyleElements(() => {
      plugins.selection = new X6.Selection({
        enabled: true,
        multiple: true,
        multipleSelectionModifiers: ["ctrl", "meta", "shift"],
        rubberband: true,
        movable: true,
        showNodeSelectionBox: false,
        showEdgeSelectionBox: false,
        pointerEvents: "none",
      });
      plugins.history = new X6.History({ enabled: true, beforeAddCommand: (_event, args) => !args?.options?.visual });
      plugins.clipboard = new X6.Clipboard({ enabled: true });
      plugins.keyboard = new X6.Keyboard({ enabled: true });
      graph.use(plugins.selection).use(new X6.Snapline({ enabled: true, sharp: true })).use(plugins.clipboard).use(plugins.history).use(plugins.keyboard);
      dnd = new X6.Dnd({
        target: graph,
        scaled: true,
        getDragNode: (node) => node.clone({ keepId: true }),
        getDropNode: (node) => node.clone(),
      });
    });
    graph.on("node:added", ({ node }) => dress(node));
  }
  // Tab reaches the canvas (a comparison's too, to pan it): X6's keyboard plugin makes it
  // focusable only by a click.
  container.tabIndex = 0;

  const name = (node) => describe?.(node) || `${node.id}: ${node.getData()?.type}`;
  const label = (view) => {
    const cell = view.cell;
    if (!cell.isNode()) return;
    view.container.setAttribute("id", `fe-node-${cell.id}`);
    view.container.setAttribute("role", "group");
    view.container.setAttribute("aria-label", name(cell));
    view.container.classList.add(`fe-${category(cell.getData()?.type)}`);
  };
  graph.on("view:mounted", ({ view }) => label(view));
  graph.on("node:change:data", ({ node, options }) => {
    if (options?.visual) return;
    const { type, fields } = dress(node);
    if (isSwitch(type)) syncPorts(node, type, fields);
    const view = graph.findViewByCell(node);
    if (view) label(view);
  });

  /** A switch's outputs follow its cases: one port per case, wires of a removed case go. */
  function syncPorts(node, type, fields) {
    const wanted = portItems(type, fields);
    const have = node.getPorts().map((p) => p.id);
    const keep = new Set(wanted.map((p) => p.id));
    for (const edge of graph.getConnectedEdges(node, { outgoing: true })) {
      if (!keep.has(edge.getSourcePortId())) edge.remove();
    }
    const sameOrder = have.length === wanted.length && have.every((id, i) => id === wanted[i].id);
    if (!sameOrder) node.resize(NODE_WIDTH, heightOf(type, fields));
    // Ports are laid out in the order they are listed: list them as the cases are now.
    node.prop("ports/items", wanted, { rewrite: true });
  }

  let loading = false;
  const changed = () => {
    if (!loading) onChange?.();
  };
  for (const event of ["cell:added", "cell:removed", "node:change:position", "edge:connected", "edge:change:target"]) {
    graph.on(event, changed);
  }
  graph.on("node:change:data", ({ options }) => {
    if (!options?.visual) changed();
  });
  graph.on("selection:changed", ({ added = [], removed = [] }) => {
    for (const cell of removed) graph.findViewByCell(cell)?.container.classList.remove("fe-selected");
    for (const cell of added) graph.findViewByCell(cell)?.container.classList.add("fe-selected");
    const [only] = selected();
    if (only) container.setAttribute("aria-activedescendant", `fe-node-${only}`);
    else container.removeAttribute("aria-activedescendant");
    onSelect?.(selected());
  });

  const selected = () => (plugins.selection ? plugins.selection.getSelectedCells().filter((c) => c.isNode()).map((c) => c.id) : []);

  const api = {
    graph,
    container,
    plugins,
    /** Draws `document`, laid out first where it has no positions; nothing to undo yet. */
    async load(document) {
      loading = true;
      try {
        const { nodes, edges, placed } = cellsOf(document);
        const drawn = new Promise((resolve) => {
          graph.once("render:done", resolve);
          window.setTimeout(resolve, 3000); // X6 renders in frames; never wait for ever
        });
        graph.resetCells([...nodes.map((n) => graph.createNode(n)), ...edges.map((e) => graph.createEdge(e))]);
        graph.getNodes().forEach((node) => dress(node));
        if (!placed && nodes.length) await api.layout({ history: false });
        await drawn;
      } finally {
        loading = false;
      }
      plugins.history?.clean();
      api.fit();
    },
    /** Makes the canvas show `document` (an older version brought back, a suggestion applied)
     * by changing only what differs, as one step that can be undone. */
    async replace(document) {
      const keysOf = (id) => (graph.getCellById(id)?.getData()?.fields?.cases || []).map((c) => c._port);
      const { nodes, edges } = cellsOf(document, keysOf);
      const placed = new Set((document.nodes || []).filter((n) => n.ui).map((n) => n.id));
      const wanted = new Map(nodes.map((n) => [n.id, n]));
      const wireKey = (source, port, target) => `${source} ${port} ${target}`;
      let seq = Math.max(-1, ...graph.getNodes().map((n) => n.getData()?.seq ?? 0));
      graph.batchUpdate("replace", () => {
        for (const cell of graph.getNodes()) if (!wanted.has(cell.id)) cell.remove();
        for (const meta of nodes) {
          const cell = graph.getCellById(meta.id);
          if (!cell) {
            seq += 1;
            const spot = placed.has(meta.id) ? { x: meta.x, y: meta.y } : api.freeSpot();
            graph.addNode({ ...meta, ...spot, data: { ...meta.data, seq } });
            continue;
          }
          const data = { ...meta.data, seq: cell.getData()?.seq ?? meta.data.seq };
          if (JSON.stringify(data) !== JSON.stringify(cell.getData())) cell.setData(data, { overwrite: true });
          const at = cell.getPosition();
          if (placed.has(meta.id) && (at.x !== meta.x || at.y !== meta.y)) cell.position(meta.x, meta.y);
        }
        const want = new Set(edges.map((e) => wireKey(e.source.cell, e.source.port, e.target.cell)));
        const have = new Set();
        for (const edge of graph.getEdges()) {
          const key = wireKey(edge.getSourceCellId(), edge.getSourcePortId(), edge.getTargetCellId());
          if (!want.has(key) || have.has(key)) edge.remove();
          else have.add(key);
        }
        for (const edge of edges) {
          if (!have.has(wireKey(edge.source.cell, edge.source.port, edge.target.cell))) graph.addEdge(edge);
        }
      });
      if (nodes.length && !placed.size) await api.layout();
    },
    /** The document the canvas shows, over `base` (samples and the rest it does not draw). */
    document(base) {
      return documentOf(graph.toJSON().cells, base);
    },
    node: (id) => graph.getCellById(id),
    nodes: () => graph.getNodes(),
    selected,
    select(ids, { scroll = true } = {}) {
      const cells = ids.map((id) => graph.getCellById(id)).filter(Boolean);
      if (plugins.selection) {
        plugins.selection.clean();
        plugins.selection.select(cells);
      } else {
        onSelect?.(ids);
      }
      if (scroll && cells.length === 1 && !graph.getGraphArea().containsRect(cells[0].getBBox())) graph.centerCell(cells[0]);
    },
    /** A new node of `type` at `at` (canvas units), or right of the selected node, or in view. */
    addNode(type, fields, at) {
      const id = reserve(newNodeId(type, takenIds(graph)));
      const seq = Math.max(-1, ...graph.getNodes().map((n) => n.getData()?.seq ?? 0)) + 1;
      const position = at || api.freeSpot();
      const node = graph.addNode({
        id,
        shape: "etikett-flow-node",
        ...position,
        width: NODE_WIDTH,
        height: heightOf(type, fields),
        ports: portItems(type, fields),
        data: { type, name: "", fields, seq, otherwise: false },
      });
      dress(node);
      return node;
    },
    /** Where a node added without a place goes: right of the selection, else the view's centre. */
    freeSpot() {
      const [first] = selected();
      const anchor = first && graph.getCellById(first);
      let spot = anchor
        ? { x: anchor.getBBox().x + NODE_WIDTH + 70, y: anchor.getBBox().y }
        : (() => {
            const area = graph.getGraphArea();
            return { x: area.center.x - NODE_WIDTH / 2, y: area.center.y - 26 };
          })();
      const busy = (p) => graph.getNodes().some((n) => n.getBBox().intersectsWithRect({ x: p.x, y: p.y, width: NODE_WIDTH, height: 50 }));
      for (let i = 0; i < 40 && busy(spot); i += 1) spot = { x: spot.x, y: spot.y + 80 };
      return { x: Math.round(spot.x / GRID) * GRID, y: Math.round(spot.y / GRID) * GRID };
    },
    /** A drag from the palette: a node of `type` follows the pointer and lands where dropped. */
    startDrag(type, fields, event) {
      const seq = Math.max(-1, ...graph.getNodes().map((n) => n.getData()?.seq ?? 0)) + 1;
      const node = graph.createNode({
        id: "palette-drag",
        shape: "etikett-flow-node",
        width: NODE_WIDTH,
        height: heightOf(type, fields),
        ports: portItems(type, fields),
        data: { type, name: "", fields, seq, otherwise: false },
      });
      dress(node);
      dnd.start(node, event);
    },
    connect(source, port, target) {
      const exists = graph.getConnectedEdges(graph.getCellById(source), { outgoing: true })
        .some((e) => e.getSourcePortId() === port && e.getTargetCellId() === target);
      if (exists || source === target) return null;
      return graph.addEdge({ shape: "etikett-wire", source: { cell: source, port }, target: { cell: target, port: "in" } });
    },
    /** The node's settings changed in its form: one step of history. */
    update(id, { name, fields }) {
      const node = graph.getCellById(id);
      if (!node) return;
      node.setData({ ...node.getData(), name, fields }, { overwrite: true });
    },
    remove(ids) {
      const cells = ids.map((id) => graph.getCellById(id)).filter(Boolean);
      if (cells.length) graph.removeCells(cells);
    },
    async layout({ history = true } = {}) {
      performance.mark("flow-editor:layout-start");
      const nodes = graph.getNodes();
      const positions = await layoutOf(
        nodes.map((n) => ({ id: n.id, ...n.getSize() })),
        graph.getEdges().map((e) => ({ source: e.getSourceCellId(), target: e.getTargetCellId() })),
      );
      const move = () => nodes.forEach((n) => positions.has(n.id) && n.position(positions.get(n.id).x, positions.get(n.id).y));
      if (history) graph.batchUpdate("layout", move);
      else move();
      // How long laying out took, for bench/flow_editor_bench.py.
      performance.measure("flow-editor:layout", "flow-editor:layout-start");
    },
    fit() {
      if (graph.getNodes().length) graph.zoomToFit({ padding: 40, maxScale: 1 });
      else graph.zoomTo(1);
    },
    zoom(delta) {
      graph.zoom(delta, { minScale: 0.2, maxScale: 2.5 });
    },
    dispose() {
      useIdsOf(null, graph);
      graph.dispose();
    },
  };
  if (mode === "edit") useIdsOf(graph);
  return api;
}
