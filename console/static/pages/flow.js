// One flow: its graph (read-only), lint findings, a dry run with its trace, versions and runs.

import { ROOT } from "../app.js";
import { get, listAll, page, post } from "../lib/api.js";
import { add, h, replace } from "../lib/dom.js";
import { ago, author, json, when } from "../lib/format.js";
import { flowGraph, wiresOf } from "../lib/graph.js";
import { can } from "../lib/session.js";
import {
  badge,
  button,
  errorBox,
  field,
  loading,
  pageHeader,
  pagedList,
  pre,
  section,
  select,
  showError,
  table,
  tabs,
} from "../lib/ui.js";

function findingsTable(findings) {
  return table(
    [
      { title: "Severity", render: (f) => badge(f.severity) },
      { title: "Code", render: (f) => h("code", f.code) },
      { title: "Node", render: (f) => f.node_id || "" },
      { title: "Where", render: (f) => h("code", f.path || "") },
      { title: "Message", render: (f) => f.message },
    ],
    findings,
    { empty: "No findings: the flow is clean.", caption: `${findings.length} findings` },
  );
}

function traceView(trace) {
  if (!trace || !trace.length) return h("p", { class: "muted" }, "No steps.");
  return h(
    "ol",
    { class: "trace" },
    trace.map((step) =>
      h(
        "li",
        { class: ["trace-step", step.status] },
        h("strong", step.node_id),
        ` ${step.type} `,
        badge(step.status),
        step.message ? h("div", { class: "msg error" }, step.message) : null,
        h("details", h("summary", "Input and output"), h("div", "Input"), pre(step.input), h("div", "Output"), pre(step.output)),
      ),
    ),
  );
}

export async function render(main, { id }) {
  const flow = await get(`/flows/${id}`);
  const versions = await listAll(`/flows/${id}/versions`);
  let current = await get(`/flows/${id}/document`);
  const version = select(
    versions.map((v) => [v.version, `v${v.version} · ${author(v.author)} · ${ago(v.created_at)}`]),
    { name: "version", value: String(current.version) },
  );

  add(main, 
    pageHeader(flow.name, {
      crumbs: [[`${ROOT}/flows`, "Flows"]],
      subtitle: flow.description || null,
      actions: [
        h("a", { class: ["button", can("designer") && "primary"], href: `${ROOT}/flows/${id}/edit` }, can("designer") ? "Edit" : "Open in the editor"),
        can("operator") ? h("a", { class: "button", href: `${ROOT}/deployments?flow=${id}&version=${current.version}` }, "Deploy…") : null,
      ],
    }),
    h("div", { class: "row" }, field("Version", version)),
  );

  function renderGraph(panel) {
    const details = h("div", { class: "node-details", "aria-live": "polite" }, h("p", { class: "muted" }, "Choose a node (Tab, then Enter) to see its fields."));
    const doc = current.document;
    const wires = wiresOf(doc);
    add(panel, 
      h(
        "div",
        { class: "graph-wrap" },
        flowGraph(doc, {
          findings: current.findings,
          onSelect: (node) => {
            const nodeFindings = (current.findings || []).filter((f) => f.node_id === node.id);
            replace(
              details,
              h("h3", `${node.id} (${node.type})`),
              pre(node),
              nodeFindings.length ? findingsTable(nodeFindings) : null,
            );
          },
        }),
      ),
      details,
      h(
        "details",
        h("summary", "The nodes and wires as a table"),
        table(
          [
            { title: "Node", render: (n) => n.id },
            { title: "Type", render: (n) => n.type },
            { title: "Wires to", render: (n) => wires.filter((w) => w.from === n.id).map((w) => (w.label ? `${w.to} (${w.label})` : w.to)).join(", ") },
          ],
          doc.nodes || [],
        ),
      ),
      current.findings?.length ? section("Findings of this version", findingsTable(current.findings)) : null,
    );
  }

  function renderLint(panel) {
    const out = h("div");
    const run = async () => {
      replace(out, loading("Linting…"));
      try {
        const answer = await post(`/flows/${id}/lint`, { version: Number(version.value) });
        replace(out, findingsTable(answer.findings));
      } catch (error) {
        showError(out, error);
      }
    };
    add(panel, can("designer", "operator") ? button("Lint again", run) : null, out);
    if (can("designer", "operator")) run();
    else replace(out, findingsTable(current.findings || []));
  }

  function renderDryRun(panel) {
    const samples = h("textarea", { name: "samples", rows: 8, spellcheck: "false" });
    samples.value = json(current.document.samples || [{}]);
    const triggers = (current.document.nodes || []).filter((n) => String(n.type).startsWith("trigger."));
    const trigger = select([["", "First trigger"], ...triggers.map((n) => [n.id, n.id])], { name: "trigger" });
    const context = h("textarea", { name: "context", rows: 3, spellcheck: "false" });
    context.value = "{}";
    const out = h("div", { "aria-live": "polite" });
    const run = async () => {
      let parsedSamples;
      let parsedContext;
      try {
        parsedSamples = JSON.parse(samples.value || "[]");
        parsedContext = JSON.parse(context.value || "{}");
      } catch (error) {
        replace(out, errorBox({ title: "Not JSON", message: error.message }));
        return;
      }
      replace(out, loading("Running the samples through the flow…"));
      try {
        const answer = await post(`/flows/${id}/dry-run`, {
          version: Number(version.value),
          samples: parsedSamples,
          trigger: trigger.value || undefined,
          context: parsedContext,
        });
        replace(
          out,
          h("p", { role: "status" }, `Dry run of v${answer.version} from ${answer.trigger}: ${answer.runs.length} samples. Nothing was printed, sent or written.`),
          answer.runs.map((runItem) =>
            section(
              `Sample ${runItem.sample_index + 1}`,
              traceView(runItem.trace),
              h("h3", "Side effects (not performed)"),
              table(
                [
                  { title: "Node", render: (s) => s.node_id },
                  { title: "Kind", render: (s) => s.kind },
                  { title: "Would do", render: (s) => pre(s.detail) },
                ],
                runItem.side_effects,
                { empty: "None." },
              ),
              runItem.errors?.length ? h("ul", runItem.errors.map((e) => h("li", { class: "msg error" }, typeof e === "string" ? e : JSON.stringify(e)))) : null,
            ),
          ),
        );
      } catch (error) {
        showError(out, error);
      }
    };
    add(panel, 
      field("Samples (a JSON array of records)", samples),
      h("div", { class: "row" }, field("Trigger", trigger), field("Context parameters (JSON object)", context)),
      can("designer", "operator") ? button("Dry run", run, { class: "primary" }) : h("p", { class: "muted" }, "Designers and operators may dry-run."),
      out,
    );
  }

  function renderVersions(panel) {
    add(panel, 
      table(
        [
          { title: "Version", render: (v) => `v${v.version}` },
          { title: "Author", render: (v) => author(v.author) },
          { title: "Saved", render: (v) => when(v.created_at) },
          { title: "Comment", render: (v) => v.comment || "" },
        ],
        versions,
      ),
    );
  }

  function renderRuns(panel) {
    const outcome = select([["", "Any outcome"], "succeeded", "failed", "partial"], { name: "outcome" });
    const list = h("div");
    const load = () =>
      replace(
        list,
        pagedList(
          (cursor) => page(`/flows/${id}/runs`, { outcome: outcome.value || undefined }, cursor),
          (rows) =>
            rows.length
              ? h(
                  "div",
                  rows.map((r) =>
                    h(
                      "details",
                      { class: "panel" },
                      h(
                        "summary",
                        badge(r.outcome),
                        ` ${when(r.started_at)} · v${r.version} · ${r.records} records · Runner ${r.runner_id || "—"} · trigger ${r.trigger?.node_id || ""}`,
                      ),
                      r.job_ids?.length ? h("p", "Jobs: ", r.job_ids.map((j) => [h("a", { href: `${ROOT}/jobs/${j}` }, j), " "])) : null,
                      // A Runner reports the first records' traces (trace.records), a trace each.
                      (Array.isArray(r.trace?.records) ? r.trace.records : []).map((trace, index) =>
                        h("div", h("h3", `Record ${index + 1}`), traceView(Array.isArray(trace) ? trace : [])),
                      ),
                    ),
                  ),
                )
              : h("p", { class: "empty" }, "No runs reported yet."),
        ),
      );
    outcome.addEventListener("change", load);
    add(panel, h("div", { class: "filters" }, field("Outcome", outcome)), list);
    load();
  }

  function renderDeployments(panel) {
    add(panel, 
      pagedList(
        (cursor) => page("/deployments", { flow_id: id }, cursor),
        (rows) =>
          table(
            [
              { title: "Deployment", render: (d) => h("a", { href: `${ROOT}/deployments/${d.id}` }, d.id) },
              { title: "Version", render: (d) => `v${d.version}` },
              { title: "Status", render: (d) => badge(d.status) },
              { title: "Created", render: (d) => `${when(d.created_at)} by ${author(d.author)}` },
            ],
            rows,
            { empty: "Not deployed yet." },
          ),
      ),
    );
  }

  const sections = tabs(
    [
      { id: "graph", label: "Graph", render: renderGraph },
      { id: "lint", label: "Lint", render: renderLint },
      { id: "dry-run", label: "Dry run", render: renderDryRun },
      { id: "versions", label: `Versions (${versions.length})`, render: renderVersions },
      { id: "runs", label: "Runs", render: renderRuns },
      { id: "deployments", label: "Deployments", render: renderDeployments },
    ],
    { label: "Flow sections" },
  );
  version.addEventListener("change", async () => {
    current = await get(`/flows/${id}/document`, { version: version.value });
    for (const tab of ["graph", "lint", "dry-run"]) sections.refresh(tab);
  });
  add(main, sections);
}
