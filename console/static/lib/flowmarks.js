// What the canvas shows on top of the flow, never part of it (nothing here can be undone): lint
// findings on the nodes and wires they concern, a dry run's trace step by step, and what a
// version comparison found added, removed or changed.

import { wireAt } from "./flowcells.js";
import { VISUAL } from "./flowshapes.js";

const FINDING = ["fe-error", "fe-warning"];
const TRACE = ["fe-executed", "fe-failed", "fe-skipped", "fe-step"];
const DIFF = ["fe-added", "fe-removed", "fe-changed", "fe-moved"];

function element(canvas, cell) {
  return canvas.graph.findViewByCell(cell)?.container || null;
}

function setClasses(el, all, wanted) {
  if (!el) return;
  for (const name of all) el.classList.toggle(name, wanted.includes(name));
}

/** The node's accessible name, with what is marked on it. */
function name(canvas, node, notes) {
  const el = element(canvas, node);
  if (!el) return;
  const base = `${node.id}: ${node.getData()?.type}`;
  el.setAttribute("aria-label", [base, ...notes.filter(Boolean)].join(", "));
}

/** Port key of a switch case by index, as the canvas holds it. */
function keysOf(canvas) {
  return (id) => (canvas.node(id)?.getData()?.fields?.cases || []).map((c) => c._port);
}

/**
 * Findings on the canvas: a node with an error gets a red border and "✕ n" (a warning: amber,
 * "! n"); a finding that points at one of its wires marks that wire. `document` is what was
 * linted (its node indexes are what the findings' paths count).
 */
export function markFindings(canvas, findings, document) {
  const byNode = new Map();
  const wires = [];
  for (const finding of findings) {
    const id = finding.node_id || document.nodes?.[Number(String(finding.path).split("/")[2])]?.id;
    if (id) {
      if (!byNode.has(id)) byNode.set(id, []);
      byNode.get(id).push(finding);
    }
    const wire = wireAt(document, finding.path, keysOf(canvas));
    if (wire?.target && finding.severity === "error") wires.push(wire);
  }
  for (const node of canvas.nodes()) {
    const found = byNode.get(node.id) || [];
    const errors = found.filter((f) => f.severity === "error").length;
    const warnings = found.length - errors;
    const kind = errors ? "fe-error" : warnings ? "fe-warning" : null;
    setClasses(element(canvas, node), FINDING, kind ? [kind] : []);
    node.setAttrs({ badge: { text: errors ? `✕ ${errors}` : warnings ? `! ${warnings}` : "" } }, VISUAL);
    name(canvas, node, [
      errors ? `${errors} error${errors > 1 ? "s" : ""}` : null,
      warnings ? `${warnings} warning${warnings > 1 ? "s" : ""}` : null,
    ]);
  }
  for (const edge of canvas.graph.getEdges()) {
    const bad = wires.some(
      (w) => w.source === edge.getSourceCellId() && w.target === edge.getTargetCellId() && (!w.port || w.port === edge.getSourcePortId()),
    );
    setClasses(element(canvas, edge), ["fe-error"], bad ? ["fe-error"] : []);
  }
}

/** A dry run's trace of one record: each node executed, failed or skipped; `step` the node the
 * stepping is at. Without a trace, the canvas shows the flow again. */
export function markTrace(canvas, trace, step) {
  const root = canvas.container;
  root.classList.toggle("fe-tracing", Boolean(trace));
  const status = new Map((trace || []).map((s) => [s.node_id, s.status]));
  for (const node of canvas.nodes()) {
    const state = status.get(node.id);
    const wanted = [];
    if (state === "executed") wanted.push("fe-executed");
    if (state === "error") wanted.push("fe-failed");
    if (state === "skipped") wanted.push("fe-skipped");
    if (trace && step === node.id) wanted.push("fe-step");
    setClasses(element(canvas, node), TRACE, wanted);
  }
}

/** A comparison: node id → "added" | "removed" | "changed" | "moved", the same for wires by
 * "source port target". */
export function markDiff(canvas, nodes, wires = new Map()) {
  for (const node of canvas.nodes()) {
    const mark = nodes.get(node.id);
    setClasses(element(canvas, node), DIFF, mark ? [`fe-${mark}`] : []);
    node.setAttrs({ badge: { text: { added: "+", removed: "−", changed: "~", moved: "" }[mark] || "" } }, VISUAL);
    const el = element(canvas, node);
    el?.setAttribute("data-diff", mark || "same");
    name(canvas, node, [mark ? `${mark} in the newer version` : "unchanged"]);
  }
  for (const edge of canvas.graph.getEdges()) {
    const key = `${edge.getSourceCellId()} ${edge.getSourcePortId()} ${edge.getTargetCellId()}`;
    const mark = wires.get(key);
    setClasses(element(canvas, edge), DIFF, mark ? [`fe-${mark}`] : []);
  }
}
