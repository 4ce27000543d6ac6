// The print archive: every printed record with its outcome; filter, and print one again.

import { navigate, ROOT } from "../app.js";
import { listAll, newIdempotencyKey, page, post } from "../lib/api.js";
import { add, h, replace } from "../lib/dom.js";
import { author, when } from "../lib/format.js";
import { apiRules } from "../lib/schema.js";
import { can } from "../lib/session.js";
import { badge, button, dialog, field, form, input, offlineMark, pageHeader, pagedList, pre, select, table } from "../lib/ui.js";

const OUTCOMES = [["", "Any outcome"], "confirmed", "sent", "held", "failed", ["waiting", "waiting (no outcome yet)"]];
const SCAN = 2000;

function reprint(entry, printers, rules) {
  const printer = select(printers.map((p) => [p.name, p.name]), { name: "printer", value: entry.printer });
  const copies = rules.constrain(input({ name: "copies", type: "number", step: "1", value: String(entry.copies), required: true }), "postPrint", "copies");
  // One key per dialog: sent twice (a retry, a second press), it still prints once.
  const idempotencyKey = newIdempotencyKey();
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
          idempotency_key: idempotencyKey,
        });
        close();
        navigate(`${ROOT}/jobs/${accepted.job_id}`);
      },
      { submitLabel: "Print again" },
    ),
  );
}

export async function render(main, _params, query) {
  const [labels, printers, rules] = await Promise.all([
    listAll("/labels", {}, 2000).catch(() => []),
    listAll("/printers").catch(() => []),
    apiRules(),
  ]);
  const labelName = Object.fromEntries(labels.map((l) => [l.id, l.name]));
  const label = select([["", "Any label"], ...labels.map((l) => [l.id, l.name])], { name: "label_id", value: query.get("label") || "" });
  const job = input({ name: "job_id", placeholder: "job_…", value: query.get("job") || "" });
  const outcome = select(OUTCOMES, { name: "outcome" });
  const list = h("div");
  // The API filters by label and job; the outcome is filtered here, over as many pages as it
  // takes to find some (at most SCAN entries per "Load more"), so a match is never hidden
  // behind a first page without one.
  let searchedAll = true;
  const loadPage = async (cursor) => {
    const filters = { label_id: label.value || undefined, job_id: job.value.trim() || undefined };
    const wanted = outcome.value;
    const items = [];
    let scanned = 0;
    let next = cursor;
    do {
      const answer = await page("/print-archive", filters, next, wanted ? 200 : 50);
      items.push(...(wanted ? answer.items.filter((e) => (e.outcome || "waiting") === wanted) : answer.items));
      scanned += answer.items.length;
      next = answer.next_cursor;
    } while (wanted && next && !items.length && scanned < SCAN);
    searchedAll = !next;
    return { items, next_cursor: next };
  };
  const load = () =>
    replace(
      list,
      pagedList(
        loadPage,
        (shown) => {
          const empty = searchedAll ? "Nothing printed matches." : "No match among the newest entries; Load more searches older ones.";
          return table(
            [
              { title: "Printed", render: (e) => [when(e.printed_at || e.created_at), offlineMark(e)] },
              { title: "Label", render: (e) => [h("a", { href: `${ROOT}/labels/${e.label_id}` }, labelName[e.label_id] || e.label_id), ` v${e.label_version}`] },
              { title: "Printer", render: (e) => e.printer },
              { title: "Copies", render: (e) => String(e.copies) },
              { title: "Outcome", render: (e) => [badge(e.outcome || "waiting"), e.outcome_reason ? ` ${e.outcome_reason}` : ""] },
              { title: "By", render: (e) => author(e.actor) },
              { title: "Job", render: (e) => h("a", { href: `${ROOT}/jobs/${e.job_id}` }, e.job_id) },
              { title: "Values", render: (e) => h("details", h("summary", "Show"), pre({ variables: e.variables, serials: e.serials })) },
              { title: "", render: (e) => (can("operator") ? button("Print again", () => reprint(e, printers, rules), { "aria-label": `Print again: ${labelName[e.label_id] || e.label_id} on ${e.printer}` }) : "") },
            ],
            shown,
            { empty },
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
