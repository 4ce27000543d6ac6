// A flow's versions in the editor: who saved each and why, two of them (or the last saved one
// and the unsaved changes) compared as a graph — nodes added, removed and changed marked, wires
// too — and as the settings that changed; an older version brought back as unsaved changes.

import { get, listAll } from "./api.js";
import { add, h, nextId, replace } from "./dom.js";
import { ago, author, when } from "./format.js";
import { flowCanvas } from "./flowcanvas.js";
import { markDiff } from "./flowmarks.js";
import { nodeChanges } from "./flowpatch.js";
import { badge, button, dialog, loading, select, showError, table } from "./ui.js";

const UNSAVED = "unsaved";

/** Every wire of a document as "source route target", a route being out, case:i or otherwise. */
function wiresOf(document) {
  const found = new Set();
  for (const node of document.nodes || []) {
    for (const target of node.wires || []) found.add(`${node.id} out ${target}`);
    (node.cases || []).forEach((item, i) => (item?.wires || []).forEach((target) => found.add(`${node.id} case:${i} ${target}`)));
    for (const target of node.otherwise || []) found.add(`${node.id} otherwise ${target}`);
  }
  return found;
}

const shown = (value) => (value === undefined ? "—" : typeof value === "string" ? value : JSON.stringify(value));

/** The settings that changed, node by node, as a list people read. */
export function settingsDiff(changes) {
  const items = [
    ...changes.added.map((n) => h("li", h("ins", "+ "), h("code", n.id), ` added (${n.type})`)),
    ...changes.removed.map((n) => h("li", h("del", "− "), h("code", n.id), ` removed (${n.type})`)),
    ...[...changes.changed].map(([id, list]) =>
      h(
        "li",
        "~ ",
        h("code", id),
        " changed:",
        h(
          "ul",
          list.map((c) => h("li", h("code", c.path), ": ", h("del", shown(c.before)), " → ", h("ins", shown(c.after)))),
        ),
      ),
    ),
  ];
  const moved = [...changes.moved].filter((id) => !changes.changed.has(id));
  if (moved.length) items.push(h("li", { class: "muted" }, `Moved on the canvas only: ${moved.join(", ")}.`));
  return items.length ? h("ul", { class: "fe-setting-diff" }, items) : h("p", { class: "muted" }, "The two are the same.");
}

/** The comparison of `before` with `after` (documents) in a dialog with a read-only canvas. */
export async function compareDialog(before, after, { title }) {
  const changes = nodeChanges(before, after);
  const host = h("div", { class: "fe-pane fe-canvas" });
  const legendId = nextId("legend");
  const body = h(
    "div",
    { class: "fe-compare" },
    host,
    h(
      "div",
      h(
        "p",
        { class: "fe-legend", id: legendId },
        h("span", h("span", { class: "swatch added" }), " added"),
        h("span", h("span", { class: "swatch removed" }), " removed"),
        h("span", h("span", { class: "swatch changed" }), " changed"),
      ),
      h("h3", "Settings"),
      settingsDiff(changes),
    ),
  );
  let canvas = null;
  const { el } = dialog(title, body, { wide: true, onClose: () => canvas?.dispose() });
  el.classList.add("fe-wide");
  // Both versions on one canvas: the newer one, and what it no longer has.
  const unwired = (node) => {
    const { wires, otherwise, ...rest } = node;
    if (Array.isArray(rest.cases)) rest.cases = rest.cases.map((c) => ({ ...c, wires: [] }));
    return rest;
  };
  const union = { nodes: [...(after.nodes || []), ...changes.removed.map(unwired)] };
  canvas = await flowCanvas(host, { mode: "diff" });
  await canvas.load(union);
  canvas.container.setAttribute("aria-label", `${title}: the flow with its changes marked`);
  canvas.container.setAttribute("aria-describedby", legendId);
  const old = wiresOf(before);
  const now = wiresOf(after);
  const portOf = (id, route) => {
    if (!route.startsWith("case:")) return route;
    const key = canvas.node(id)?.getData()?.fields?.cases?.[Number(route.slice(5))]?._port;
    return key ? `case:${key}` : null;
  };
  const wireMarks = new Map();
  for (const wire of old) {
    if (now.has(wire)) continue;
    const [source, route, target] = wire.split(" ");
    const port = portOf(source, route);
    if (port && canvas.node(source) && canvas.node(target)) {
      canvas.graph.addEdge({ shape: "etikett-wire", source: { cell: source, port }, target: { cell: target, port: "in" } });
      wireMarks.set(`${source} ${port} ${target}`, "removed");
    }
  }
  for (const wire of now) {
    if (old.has(wire)) continue;
    const [source, route, target] = wire.split(" ");
    wireMarks.set(`${source} ${portOf(source, route)} ${target}`, "added");
  }
  const marks = new Map([
    ...changes.added.map((n) => [n.id, "added"]),
    ...changes.removed.map((n) => [n.id, "removed"]),
    ...[...changes.changed.keys()].map((id) => [id, "changed"]),
  ]);
  markDiff(canvas, marks, wireMarks);
  canvas.fit();
}

/**
 * The versions panel in `host`: `flowId`; `current()` → the editor's document; `saved()` →
 * {version, document}; `onRestore(document, version)` brings an older version back.
 */
export function versionsPanel(host, { flowId, current, saved, onRestore, editable }) {
  const list = h("div");
  const from = select([], { name: "from", "aria-label": "Compare version" });
  const to = select([], { name: "to", "aria-label": "with" });
  const documentOf = async (value) => (value === UNSAVED ? current() : (await get(`/flows/${flowId}/versions/${value}`)).document);
  const compare = async () => {
    const [before, after] = await Promise.all([documentOf(from.value), documentOf(to.value)]);
    const name = (v) => (v === UNSAVED ? "your unsaved changes" : `v${v}`);
    await compareDialog(before, after, { title: `Compare ${name(from.value)} with ${name(to.value)}` });
  };
  add(
    host,
    h("div", { class: "fe-compare-row" }, h("span", "Compare"), from, h("span", "with"), to, button("Compare", compare, { class: "primary" })),
    list,
  );
  async function load() {
    replace(list, loading());
    try {
      const versions = await listAll(`/flows/${flowId}/versions`);
      const options = versions.map((v) => [v.version, `v${v.version} · ${author(v.author)} · ${ago(v.created_at)}`]);
      replace(from, options.map(([value, text]) => h("option", { value }, text)));
      replace(to, h("option", { value: UNSAVED }, "Your unsaved changes"), options.map(([value, text]) => h("option", { value }, text)));
      from.value = String(saved().version > 1 ? saved().version - 1 : saved().version);
      to.value = String(saved().version);
      replace(
        list,
        table(
          [
            { title: "Version", render: (v) => `v${v.version}` },
            { title: "Status", render: (v) => badge(v.status) },
            { title: "Author", render: (v) => author(v.author) },
            { title: "Saved", render: (v) => h("time", { datetime: v.created_at, title: when(v.created_at) }, ago(v.created_at)) },
            { title: "Comment", render: (v) => v.comment || "" },
            {
              title: "",
              render: (v) => [
                v.version > 1
                  ? button("Changes", async () => {
                      const [before, after] = await Promise.all([documentOf(v.version - 1), documentOf(v.version)]);
                      await compareDialog(before, after, { title: `Compare v${v.version - 1} with v${v.version}` });
                    }, { "aria-label": `Changes of v${v.version}` })
                  : null,
                editable && v.version !== saved().version
                  ? button("Bring back", async () => onRestore(await documentOf(v.version), v.version), { "aria-label": `Bring back v${v.version}` })
                  : null,
              ],
            },
          ],
          versions,
          { caption: `${versions.length} versions, newest first` },
        ),
      );
      list.querySelector("table")?.classList.add("fe-versions");
    } catch (error) {
      showError(list, error);
    }
  }
  load();
  return { reload: load };
}
