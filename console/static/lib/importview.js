// An import's answer as a person reads it: each label created, whether it came through exactly or
// with warnings, and the report (what was approximated, dropped or prints wrong, where in the file).

import { ROOT } from "../app.js";
import { h } from "./dom.js";
import { count } from "./format.js";
import { badge, table } from "./ui.js";

/** "Imported exactly" or "Imported with warnings (n)" for one created label. */
export function fidelityBadge(document) {
  return document.fidelity === "exact"
    ? badge("ok", "Imported exactly")
    : badge("warning", `Imported with ${count(document.warnings, "warning")}`);
}

function where(entry, documents) {
  const parts = [];
  if (entry.document !== undefined && entry.document !== null && documents.length > 1) {
    parts.push(documents[entry.document]?.name ?? `label ${entry.document + 1}`);
  }
  if (entry.line) parts.push(`line ${entry.line}`);
  if (entry.element) parts.push(entry.element);
  return parts.join(", ") || "whole file";
}

/** The whole answer of POST /import: a summary, the labels with their fidelity, the report. */
export function importResult(answer) {
  const documents = answer.documents || [];
  const report = answer.report || [];
  const exact = documents.filter((d) => d.fidelity === "exact").length;
  const warnings = report.filter((entry) => entry.severity === "warning");
  const notes = report.filter((entry) => entry.severity !== "warning");
  const columns = (what) => [
    { title: "Severity", render: (entry) => badge(entry.severity) },
    { title: "Where", render: (entry) => where(entry, documents) },
    { title: what, render: (entry) => entry.message },
  ];
  return h(
    "div",
    { class: "import-result" },
    h(
      "p",
      { role: "status" },
      `${answer.source.name} (${answer.source.format === "zpl" ? "ZPL" : "gLabels"}): `,
      `${count(documents.length, "label")} created as ${documents.length === 1 ? "a draft" : "drafts"}, `,
      `${exact} imported exactly.`,
    ),
    h(
      "ul",
      { class: "import-labels", "aria-label": "Imported labels" },
      documents.map((d) =>
        h("li", h("a", { href: `${ROOT}/labels/${d.label_id}` }, d.name), " ", fidelityBadge(d)),
      ),
    ),
    warnings.length
      ? table(columns("What was not carried over exactly"), warnings, {
          caption: `Warnings (${warnings.length}): check these in the designer before releasing`,
        })
      : h("p", { class: "muted" }, "No warnings: every object came through as the file describes it."),
    notes.length
      ? h(
          "details",
          { class: "import-notes" },
          h("summary", `Notes (${notes.length}): settings and mappings by design`),
          table(columns("Note"), notes),
        )
      : null,
  );
}
