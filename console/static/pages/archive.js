// The print archive: every printed record with its outcome; filter, and print one again.

import { navigate, ROOT } from "../app.js";
import { listAll, page, post } from "../lib/api.js";
import { add, h, replace } from "../lib/dom.js";
import { when } from "../lib/format.js";
import { can } from "../lib/session.js";
import { badge, button, dialog, field, form, input, pageHeader, pagedList, pre, select, table } from "../lib/ui.js";

const OUTCOMES = [["", "Any outcome"], "confirmed", "sent", "held", "failed"];

function reprint(entry, printers) {
  const printer = select(printers.map((p) => [p.name, p.name]), { name: "printer", value: entry.printer });
  const copies = input({ name: "copies", type: "number", min: "1", max: "1000", value: String(entry.copies), required: true });
  const { close } = dialog(
    "Print again",
    form(
      [
        h("p", `${entry.label_id} version ${entry.label_version} with the same variables${Object.keys(entry.serials || {}).length ? "; counters take new values" : ""}.`),
        pre(entry.variables),
        h("div", { class: "row" }, field("Printer", printer), field("Copies", copies)),
      ],
      async () => {
        const accepted = await post("/print", {
          label_id: `${entry.label_id}@${entry.label_version}`,
          printer: printer.value,
          copies: Number(copies.value),
          variables: entry.variables,
        });
        close();
        navigate(`${ROOT}/jobs/${accepted.job_id}`);
      },
      { submitLabel: "Print again" },
    ),
  );
}

export async function render(main, _params, query) {
  const [labels, printers] = await Promise.all([listAll("/labels", {}, 2000).catch(() => []), listAll("/printers").catch(() => [])]);
  const labelName = Object.fromEntries(labels.map((l) => [l.id, l.name]));
  const label = select([["", "Any label"], ...labels.map((l) => [l.id, l.name])], { name: "label_id", value: query.get("label") || "" });
  const job = input({ name: "job_id", placeholder: "job_…", value: query.get("job") || "" });
  const outcome = select(OUTCOMES, { name: "outcome" });
  const list = h("div");
  const load = () =>
    replace(
      list,
      pagedList(
        (cursor) => page("/print-archive", { label_id: label.value || undefined, job_id: job.value.trim() || undefined }, cursor),
        (rows) => {
          const shown = outcome.value ? rows.filter((r) => r.outcome === outcome.value) : rows;
          return table(
            [
              { title: "Printed", render: (e) => when(e.created_at) },
              { title: "Label", render: (e) => [h("a", { href: `${ROOT}/labels/${e.label_id}` }, labelName[e.label_id] || e.label_id), ` v${e.label_version}`] },
              { title: "Printer", render: (e) => e.printer },
              { title: "Copies", render: (e) => String(e.copies) },
              { title: "Outcome", render: (e) => [badge(e.outcome || "waiting"), e.outcome_reason ? ` ${e.outcome_reason}` : ""] },
              { title: "By", render: (e) => `${e.actor?.actor === "service" ? "agent" : "person"} ${e.actor?.subject || ""}` },
              { title: "Job", render: (e) => h("a", { href: `${ROOT}/jobs/${e.job_id}` }, e.job_id) },
              { title: "Values", render: (e) => h("details", h("summary", "Show"), pre({ variables: e.variables, serials: e.serials })) },
              { title: "", render: (e) => (can("operator") ? button("Print again", () => reprint(e, printers)) : "") },
            ],
            shown,
            { empty: "Nothing printed matches." },
          );
        },
      ),
    );
  for (const control of [label, outcome]) control.addEventListener("change", load);
  job.addEventListener("change", load);
  add(main, 
    pageHeader("Print archive"),
    h("div", { class: "filters", role: "search", "aria-label": "Filter the archive" }, field("Label", label), field("Job", job), field("Outcome", outcome)),
    list,
  );
  load();
}
