// The flow editor: a palette of node types, the canvas, the chosen node's settings, and below
// them the problems lint finds as the flow changes, a dry run and the versions. Saving makes a
// new version; someone else's newer version is shown, never overwritten.

import { navigate, ROOT } from "../app.js";
import { get, listAll } from "../lib/api.js";
import { add, h, nextId, replace } from "../lib/dom.js";
import { flowCanvas } from "../lib/flowcanvas.js";
import { newCaseKey } from "../lib/flowcells.js";
import { canvasKeys, SHORTCUTS } from "../lib/flowkeys.js";
import { dryRunPanel } from "../lib/flowdryrun.js";
import { liveLint, problemsList } from "../lib/flowlint.js";
import { markFindings } from "../lib/flowmarks.js";
import { contextOf, pickers } from "../lib/flownames.js";
import { flowPalette } from "../lib/flowpalette.js";
import { applyPatch, same } from "../lib/flowpatch.js";
import { saveVersion } from "../lib/flowsave.js";
import { versionsPanel } from "../lib/flowversions.js";
import { nodeForm } from "../lib/nodeform.js";
import { can } from "../lib/session.js";
import { announce, button, confirmDialog, dialog, notify, pageHeader, table, tabs } from "../lib/ui.js";
import { newDeployment } from "./deployments.js";

function stylesheet() {
  const href = new URL("../flow-editor.css", import.meta.url).href;
  if ([...document.styleSheets].some((sheet) => sheet.href === href)) return Promise.resolve();
  return new Promise((resolve) => {
    const link = h("link", { rel: "stylesheet", href });
    link.addEventListener("load", resolve);
    link.addEventListener("error", resolve);
    document.head.append(link);
  });
}

export async function render(main, { id }) {
  performance.mark("flow-editor:start");
  const [flow, saved, registry] = await Promise.all([
    get(`/flows/${id}`),
    get(`/flows/${id}/document`),
    get("/flows/registry"),
    stylesheet(),
  ]);
  main.classList.add("fe-main");
  const editable = can("designer");
  const types = new Map(registry.items.map((item) => [item.type, item]));
  const chosen = pickers(); // read while the canvas draws; the settings wait for them

  let base = { version: saved.version, document: saved.document, status: saved.status };
  let samples = saved.document.samples || []; // the pinned records, saved with the document
  let baseline = null; // what the canvas drew at load or save: "unsaved" means different from it
  let dirty = false;

  const stateLine = h("div", { class: "fe-state", role: "status" });
  const drawState = () =>
    replace(
      stateLine,
      h("span", `v${base.version} · ${base.status}`),
      dirty ? h("span", { class: "dirty" }, "● Unsaved changes") : h("span", "Saved"),
    );
  const canvasHost = h("div", { class: "fe-pane fe-canvas" });
  const props = h("aside", { class: "fe-pane fe-props", "aria-label": "Node settings" }, h("h2", "Settings"));
  const palette = h("aside", { class: "fe-pane fe-palette", "aria-label": "Node types" }, h("h2", "Node types"));
  const aliases = h("datalist", { id: "fe-aliases" });
  const toolbar = h("div", { class: "fe-toolbar", role: "toolbar", "aria-label": "Flow editor" });
  const bottom = h("section", { class: "fe-bottom", "aria-label": "Problems, dry run and versions" });
  add(
    main,
    h(
      "div",
      { class: "fe-head" },
      pageHeader(`Edit ${flow.name}`, { crumbs: [[`${ROOT}/flows`, "Flows"], [`${ROOT}/flows/${id}`, flow.name]] }),
      stateLine,
      toolbar,
    ),
    h("div", { class: "fe-work" }, palette, canvasHost, props),
    bottom,
    aliases,
  );

  let settings = null;
  let lint = null;
  const canvas = await flowCanvas(canvasHost, {
    mode: editable ? "edit" : "view",
    onChange: () => changed(),
    onSelect: (ids) => {
      settings?.show(ids.length === 1 ? ids[0] : null);
      if (ids.length === 1) announce(`Selected ${ids[0]}`);
      else if (ids.length > 1) announce(`${ids.length} nodes selected`);
    },
  });
  const current = () => ({ ...canvas.document(base.document), samples });

  settings = nodeForm(props, {
    types,
    canvas,
    editable,
    choices: () => chosen.choices(canvas.node(settings?.id)?.getData()?.fields?.label),
    labelVariables: chosen.labelVariables,
    ready: chosen.loaded,
    onDelete: (ids) => canvas.remove(ids),
  });

  // --- problems, found as the flow changes -----------------------------------------------------
  let findings = saved.findings || [];
  const problemsPanel = h("div");
  const problems = problemsList(problemsPanel, {
    onChoose: (finding) => {
      if (finding.node_id && canvas.node(finding.node_id)) {
        canvas.select([finding.node_id]);
        settings.show(finding.node_id, { focus: true });
      }
    },
    explainContext: () => {
      explained = current();
      return { target: `${id}@${base.version}`, document: explained };
    },
    onApply: editable
      ? async (operations) => {
          if (!same(current(), explained)) throw new Error("The flow changed since it was explained: ask again.");
          const fixed = applyPatch(explained, operations);
          samples = fixed.samples || [];
          await canvas.replace(fixed);
          notify("The suggestion is applied as unsaved changes (Ctrl+Z takes it back).");
        }
      : null,
  });
  let explained = null; // the document the AI helper was asked about
  // The names expressions can count on: the sample records' fields, and the context parameters
  // set where the flow is deployed (deployment and group context), once known.
  let contextNames = null;
  contextOf(id).then((names) => {
    contextNames = names;
    if (baseline && names) lint?.schedule(current(), scope()); // else the first lint has them
  });
  const scope = () => {
    const records = current().samples || [];
    const fields = [...new Set(records.flatMap((r) => (r && typeof r === "object" ? Object.keys(r) : [])))];
    return { ...(fields.length ? { record: fields } : {}), ...(contextNames?.length ? { context: contextNames } : {}) };
  };
  const showFindings = (answer, document) => {
    findings = answer.findings;
    markFindings(canvas, findings, document);
    settings.findings(findings, document);
    settings.names(answer.record_fields || null);
    problems.show(findings);
    sections.label("problems", `Problems (${findings.length})`);
  };
  lint = can("designer", "operator") ? liveLint(id, showFindings) : null;

  let dryRun = null;
  let versions = null;
  const sections = tabs(
    [
      { id: "problems", label: `Problems (${findings.length})`, render: (panel) => panel.append(problemsPanel) },
      {
        id: "dry-run",
        label: "Dry run",
        render: (panel) => {
          dryRun = dryRunPanel(panel, {
            flowId: id,
            canvas,
            document: current,
            onPin: editable ? pinSamples : null,
            onStep: (nodeId) => {
              const node = canvas.node(nodeId);
              if (node && !canvas.graph.getGraphArea().containsRect(node.getBBox())) canvas.graph.centerCell(node);
            },
          });
        },
      },
      {
        id: "versions",
        label: "Versions",
        render: (panel) => {
          versions = versionsPanel(panel, { flowId: id, current, saved: () => base, editable, onRestore: restore });
        },
      },
    ],
    {
      label: "Flow editor panels",
      // A dry run's trace and labels, and the version history, want room: the panel grows.
      onChange: (tabId) => bottom.classList.toggle("tall", tabId !== "problems"),
    },
  );
  const tabOf = (tabId) => sections.querySelectorAll("[role=tab]")[["problems", "dry-run", "versions"].indexOf(tabId)];
  sections.label = (tabId, text) => {
    const tab = tabOf(tabId);
    if (tab) tab.textContent = text;
  };
  bottom.append(sections);

  function pinSamples(records) {
    samples = records;
    changed();
    notify(`${records.length} records pinned as the flow's samples; saved with the next version.`);
  }
  async function restore(document, version) {
    samples = document.samples || [];
    await canvas.replace(document);
    notify(`Version ${version} is back as unsaved changes: save it to make it the latest.`);
  }

  function updateAliases() {
    const names = new Set(canvas.nodes().map((n) => n.getData()?.fields?.printer).filter(Boolean));
    replace(aliases, [...names].map((name) => h("option", { value: name })));
  }

  function changed() {
    const document = current();
    dirty = !same(document, baseline);
    drawState();
    settings.refresh();
    updateAliases();
    lint?.schedule(document, scope());
    dryRun?.stale();
    emptyHint.hidden = canvas.nodes().length > 0;
  }

  // --- saving ---------------------------------------------------------------------------------
  function save() {
    return saveVersion({
      flowId: id,
      base,
      document: current(),
      onSaved: (answer) => {
        base = { version: answer.version, document: answer.document, status: answer.status };
        baseline = current();
        versions?.reload();
        dirty = false;
        drawState();
        showFindings({ findings: answer.findings, record_fields: null }, answer.document);
        lint?.schedule(current(), scope());
      },
    });
  }

  // --- toolbar ---------------------------------------------------------------------------------
  const { history } = canvas.plugins;
  const undo = button("Undo", () => history?.undo(), { "aria-keyshortcuts": "Control+Z", title: "Undo (Ctrl+Z)" });
  const redo = button("Redo", () => history?.redo(), { "aria-keyshortcuts": "Control+Shift+Z", title: "Redo (Ctrl+Shift+Z)" });
  const saveButton = button("Save version…", save, { class: "primary", "aria-keyshortcuts": "Control+S" });
  if (editable) {
    add(
      toolbar,
      undo,
      redo,
      h("span", { class: "sep", "aria-hidden": "true" }),
      button("Auto-layout", () => canvas.layout(), { title: "Lay the flow out left to right" }),
    );
  }
  const shortcuts = () => {
    const done = h("button", { type: "button", class: "primary" }, "Done");
    const { close } = dialog(
      "Keyboard",
      [
        h("p", "On the canvas (Tab to it):"),
        table([{ title: "Keys", render: ([keys]) => h("kbd", keys) }, { title: "Does", render: ([, does]) => does }], SHORTCUTS),
        h("p", { class: "muted" }, "Node types are buttons: Enter adds one beside the chosen node. A node's wires are in its settings, under Wires."),
      ],
      { wide: true, actions: [done] },
    );
    done.addEventListener("click", () => close());
  };
  add(
    toolbar,
    button("Keys", shortcuts, { "aria-label": "Keyboard shortcuts", "aria-keyshortcuts": "Shift+?" }),
    button("−", () => canvas.zoom(-0.15), { "aria-label": "Zoom out" }),
    button("Fit", () => canvas.fit(), { "aria-label": "Fit the flow into view" }),
    button("+", () => canvas.zoom(0.15), { "aria-label": "Zoom in" }),
    editable ? [h("span", { class: "sep", "aria-hidden": "true" }), saveButton] : null,
    can("operator") ? button("Deploy…", deploy, { title: "Deploy the saved version to Runner groups" }) : null,
  );

  async function deploy() {
    if (dirty) {
      const first = await confirmDialog(
        "Save before deploying",
        `A deployment runs a saved version. Your changes are not saved: save them as version ${base.version + 1} first, or deploy version ${base.version} as it is.`,
        `Deploy version ${base.version}`,
      );
      if (!first) return;
    }
    const flows = await listAll("/flows");
    const aliases = [...new Set((base.document.nodes || []).filter((n) => n.type === "action.print" && n.printer).map((n) => n.printer))];
    await newDeployment(flows, id, base.version, { aliases });
  }
  const syncHistory = () => {
    for (const [control, ok] of [[undo, history?.canUndo()], [redo, history?.canRedo()]]) {
      control.setAttribute("aria-disabled", ok ? "false" : "true");
    }
  };
  canvas.graph.on("history:change", syncHistory);

  add(
    palette,
    flowPalette(registry, {
      enabled: editable,
      onAdd: (type) => {
        const node = canvas.addNode(type, defaults(type));
        canvas.select([node.id]);
        canvas.container.focus();
        announce(`Added ${node.id} (${type})`);
      },
      onDrag: (type, event) => canvas.startDrag(type, defaults(type), event),
    }),
  );
  /** A new node's fields: none (the form shows each field's default), but a switch starts with
   * one case, so it has an output to wire. */
  function defaults(type) {
    return type === "logic.switch" ? { cases: [{ when: "", _port: newCaseKey() }] } : {};
  }

  const emptyHint = h("div", { class: "fe-empty" }, h("p", "An empty flow. Drag a trigger from the node types on the left onto the canvas — or press one — then the nodes that follow it."));
  canvasHost.append(
    emptyHint,
    h("p", { class: "fe-canvas-hint", "aria-hidden": "true" }, "Drag from an output ○ to an input to wire · Right-drag or scroll to pan · Ctrl+scroll to zoom"),
  );
  const howTo = h(
    "p",
    { id: nextId("canvas-help"), class: "visually-hidden" },
    editable
      ? "Arrow keys go from node to node, Shift and arrows move the chosen node, Enter edits its settings, W its wires, Delete deletes it. The Keys button lists every shortcut."
      : "Arrow keys go from node to node; the settings show the chosen node.",
  );
  canvasHost.append(howTo);
  canvas.container.setAttribute("role", "application");
  canvas.container.setAttribute("aria-roledescription", "flow canvas");
  canvas.container.setAttribute("aria-label", `Flow canvas of ${flow.name}`);
  canvas.container.setAttribute("aria-describedby", howTo.id);

  const keys = canvasKeys(canvas, { editable, onEdit: () => settings.focus(), onWire: () => settings.focusWires(), onSave: save, announce });

  await canvas.load(saved.document);
  // From the page's first line to the flow drawn, for bench/flow_editor_bench.py.
  performance.measure("flow-editor:drawn", "flow-editor:start");
  baseline = current();
  emptyHint.hidden = canvas.nodes().length > 0;
  drawState();
  syncHistory();
  updateAliases();
  showFindings({ findings, record_fields: null }, saved.document);
  lint?.now(current(), scope());

  // Ctrl+S saves wherever the focus is in the editor (the canvas binds it too).
  const saveKey = (event) => {
    if (editable && (event.ctrlKey || event.metaKey) && event.key.toLowerCase() === "s" && main.contains(event.target) && !canvas.container.contains(event.target)) {
      event.preventDefault();
      save();
    }
  };
  document.addEventListener("keydown", saveKey);
  const leaving = (event) => {
    if (dirty) {
      event.preventDefault();
      event.returnValue = "";
    }
  };
  window.addEventListener("beforeunload", leaving);
  // A link to another page of the console asks first, too (before the router takes it).
  const away = async (event) => {
    const anchor = event.target.closest?.("a[href]");
    if (!dirty || !anchor || anchor.target || event.defaultPrevented || event.button !== 0) return;
    const target = new URL(anchor.href, window.location.href);
    if (target.origin !== window.location.origin || target.pathname === window.location.pathname) return;
    event.preventDefault();
    event.stopPropagation();
    const go = await confirmDialog("Leave without saving?", `Your changes to ${flow.name} are not saved as a version; they are lost if you leave.`, "Leave", { danger: true });
    if (go) {
      dirty = false;
      navigate(target.pathname + target.search);
    }
  };
  document.addEventListener("click", away, true);
  return () => {
    window.removeEventListener("beforeunload", leaving);
    document.removeEventListener("keydown", saveKey);
    document.removeEventListener("click", away, true);
    lint?.stop();
    dryRun?.dispose();
    keys?.dispose();
    canvas.dispose();
  };
}
