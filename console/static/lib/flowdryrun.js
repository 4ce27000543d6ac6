// The dry-run panel: records pasted, loaded from a file or taken from a run a Runner reported go
// through the flow as the editor has it (saved or not); each record's trace is stepped through
// node by node on the canvas, with the record as it entered and left each node, its side
// effects (never performed) and the labels its prints would give.

import { page, post, preview } from "./api.js";
import { parseRecords } from "./csv.js";
import { add, h, replace } from "./dom.js";
import { when } from "./format.js";
import { markTrace } from "./flowmarks.js";
import { can } from "./session.js";
import { badge, button, errorBox, field, loading, pre, select } from "./ui.js";

/** Records from text: a JSON array or object, JSON lines, or CSV with a header row. */
export function recordsOf(text) {
  const trimmed = text.trim();
  if (!trimmed) return [];
  if (trimmed.startsWith("[") || (trimmed.startsWith("{") && !trimmed.includes("\n{"))) {
    const value = JSON.parse(trimmed);
    const list = Array.isArray(value) ? value : [value];
    if (!list.every((item) => item && typeof item === "object" && !Array.isArray(item))) {
      throw new Error("Every record must be a JSON object.");
    }
    return list;
  }
  if (trimmed.startsWith("{")) {
    return trimmed.split(/\r?\n/).filter((line) => line.trim()).map((line, index) => {
      try {
        return JSON.parse(line);
      } catch {
        throw new Error(`Line ${index + 1} is not a JSON object.`);
      }
    });
  }
  return parseRecords(trimmed).records;
}

/** The records a reported run traced, as they entered its trigger. */
function recordsOfRun(run) {
  const traces = Array.isArray(run.trace?.records) ? run.trace.records : [];
  return traces
    .map((trace) => (Array.isArray(trace) ? trace.find((step) => step.node_id === run.trigger?.node_id) || trace[0] : null))
    .filter((step) => step && step.input && typeof step.input === "object")
    .map((step) => step.input);
}

/**
 * The panel in `host`. `flowId`; `canvas`; `document()` → the editor's document now;
 * `onPin(records)` makes them the document's samples; `onStep(nodeId)` when stepping.
 */
export function dryRunPanel(host, { flowId, canvas, document, onPin, onStep }) {
  const records = h("textarea", { name: "records", rows: 6, spellcheck: "false" });
  records.value = JSON.stringify(document().samples || [], null, 1);
  const file = h("input", { type: "file", accept: ".csv,.json,.jsonl,.txt,text/csv,application/json" });
  const runs = select([["", "Records a Runner reported…"]], { name: "runs" });
  const triggers = select([["", "First trigger"]], { name: "trigger" });
  const context = h("input", { type: "text", name: "context", value: "{}", spellcheck: "false" });
  const out = h("div", { class: "fe-dry-out", "aria-live": "polite" });
  const urls = [];
  let reported = [];
  let result = null;

  file.addEventListener("change", async () => {
    const chosen = file.files?.[0];
    if (chosen) records.value = await chosen.text();
  });
  runs.addEventListener("change", () => {
    const run = reported.find((r) => r.id === runs.value);
    if (run) records.value = JSON.stringify(recordsOfRun(run), null, 1);
  });
  const refreshTriggers = () => {
    const ids = (document().nodes || []).filter((n) => String(n.type).startsWith("trigger.")).map((n) => n.id);
    const keep = triggers.value;
    replace(triggers, h("option", { value: "" }, "First trigger"), ids.map((id) => h("option", { value: id, selected: id === keep }, id)));
  };

  async function loadRuns() {
    try {
      reported = (await page(`/flows/${flowId}/runs`, {}, null, 20)).items.filter((run) => recordsOfRun(run).length);
      replace(
        runs,
        h("option", { value: "" }, reported.length ? "Records a Runner reported…" : "No run reported yet"),
        reported.map((run) => h("option", { value: run.id }, `${run.trigger?.source || run.trigger?.node_id} · ${recordsOfRun(run).length} of ${run.records} records · ${when(run.started_at)}`)),
      );
    } catch {
      /* runs are a convenience here */
    }
  }

  async function run() {
    for (const url of urls.splice(0)) URL.revokeObjectURL(url);
    let samples;
    let contextValue;
    try {
      samples = recordsOf(records.value);
      contextValue = JSON.parse(context.value || "{}");
    } catch (error) {
      replace(out, errorBox({ title: "These records cannot be read", message: error.message }));
      return;
    }
    replace(out, loading("Running the records through the flow…"));
    try {
      const answer = await post(`/flows/${flowId}/dry-run`, {
        document: document(),
        samples,
        trigger: triggers.value || undefined,
        context: contextValue,
      });
      result = { answer, record: 0, step: 0 };
      draw();
    } catch (error) {
      result = null;
      markTrace(canvas, null);
      replace(out, errorBox(error));
    }
  }

  function draw() {
    const { answer } = result;
    const prints = answer.runs.flatMap((r) => r.side_effects.filter((e) => e.kind === "print"));
    const failed = answer.runs.filter((r) => r.errors.length).length;
    const recordChoice = select(
      answer.runs.map((r, i) => [i, `Record ${i + 1}${r.errors.length ? " — failed" : ""}`]),
      { name: "record", value: String(result.record), "aria-label": "Record to step through" },
    );
    recordChoice.addEventListener("change", () => {
      result.record = Number(recordChoice.value);
      result.step = 0;
      draw();
    });
    const gallery = h("div", { class: "fe-previews" });
    replace(
      out,
      h(
        "p",
        { role: "status" },
        `${answer.runs.length} record${answer.runs.length === 1 ? "" : "s"} from ${answer.trigger}: ${prints.length} print${prints.length === 1 ? "" : "s"}`,
        failed ? `, ${failed} failed` : "",
        ". Nothing was printed, sent or written.",
      ),
      h(
        "div",
        { class: "fe-dry-result" },
        h("div", h("div", { class: "fe-step-bar" }, recordChoice, stepControls()), stepDetail()),
        prints.length ? h("section", { "aria-label": "Labels it would print" }, h("h3", "Labels it would print"), gallery) : null,
      ),
    );
    previews(prints, gallery);
  }

  function steps() {
    return (result.answer.runs[result.record]?.trace || []).filter((s) => s.status !== "skipped");
  }

  function stepControls() {
    const list = steps();
    const at = list[result.step];
    markTrace(canvas, result.answer.runs[result.record]?.trace || [], at?.node_id);
    if (at) onStep?.(at.node_id);
    const move = (delta) => () => {
      result.step = Math.min(list.length - 1, Math.max(0, result.step + delta));
      draw();
      out.querySelector(delta < 0 ? ".fe-prev" : ".fe-next")?.focus();
    };
    return [
      button("◀ Previous step", move(-1), { class: "fe-prev", "aria-disabled": String(result.step === 0) }),
      h("span", at ? `Step ${result.step + 1} of ${list.length}: ${at.node_id} (${at.type}) ` : "No step ", at ? badge(at.status) : null),
      button("Next step ▶", move(1), { class: "fe-next", "aria-disabled": String(result.step >= list.length - 1) }),
    ];
  }

  function stepDetail() {
    const runItem = result.answer.runs[result.record];
    const at = steps()[result.step];
    const effects = runItem.side_effects.filter((e) => !at || e.node_id === at.node_id);
    return h(
      "div",
      at?.message ? h("p", { class: "msg error" }, at.message) : null,
      at
        ? h("div", { class: "fe-step" }, h("div", h("strong", "Record in"), pre(at.input)), h("div", h("strong", "Record out"), at.output === null ? h("p", { class: "muted" }, "Stops here.") : pre(at.output)))
        : null,
      effects.length
        ? h(
            "ul",
            { class: "fe-effects" },
            effects.map((e) => h("li", badge("not_performed", "not performed"), ` ${e.kind} by ${e.node_id}: `, h("code", summary(e)))),
          )
        : null,
      runItem.errors.map((e) => h("p", { class: "msg error" }, `${e.node_id}: ${e.message}`)),
    );
  }

  function summary(effect) {
    const d = effect.detail || {};
    if (effect.kind === "print") return `${d.label}${d.version ? `@${d.version}` : ""} × ${d.copies} on “${d.printer}”${d.refused ? ` — refused: ${d.refused.code}` : ""}`;
    if (effect.kind === "http") return `${d.method} ${d.url}`;
    if (effect.kind === "file") return `${d.path} (${d.bytes} bytes)`;
    return `${d.level}: ${d.message}`;
  }

  async function previews(prints, gallery) {
    for (const [index, effect] of prints.entries()) {
      const d = effect.detail || {};
      if (!d.version || d.refused) continue;
      const copies = `${d.copies} cop${d.copies === 1 ? "y" : "ies"}`;
      const figure = h("figure", { title: `${d.label}@${d.version} on “${d.printer}”` }, h("figcaption", `Print ${index + 1} · ${copies}`));
      gallery.append(figure);
      try {
        const picture = await preview(d.label, { version: d.version, variables: d.variables || {}, counters: d.counter_values, samples: false });
        const url = URL.createObjectURL(picture.blob);
        urls.push(url);
        figure.prepend(h("img", { src: url, class: "raster", alt: `Label ${index + 1} as it would print: ${d.label} version ${d.version}` }));
      } catch (error) {
        figure.prepend(h("p", { class: "msg error" }, error.message));
      }
    }
  }

  const runButton = can("designer", "operator") ? button("Dry run", run, { class: "primary" }) : null;
  add(
    host,
    h(
      "div",
      { class: "fe-dry" },
      h(
        "div",
        field("Records (JSON, JSON lines or CSV with a header row)", records),
        h("div", { class: "row" }, field("From a file", file), field("Or a reported run", runs)),
        h("div", { class: "row" }, field("Trigger", triggers), field("Context (JSON object)", context)),
        h("div", { class: "actions" }, runButton, onPin ? button("Pin as the flow's samples", () => onPin(recordsOf(records.value))) : null),
      ),
      out,
    ),
  );
  refreshTriggers();
  loadRuns();
  return {
    /** The flow changed: the trace on the canvas may no longer fit it. */
    stale() {
      refreshTriggers();
      if (result) {
        result = null;
        markTrace(canvas, null);
        replace(out, h("p", { class: "muted" }, "The flow changed since the last dry run: run it again."));
      }
    },
    dispose() {
      for (const url of urls.splice(0)) URL.revokeObjectURL(url);
      markTrace(canvas, null);
    },
  };
}
