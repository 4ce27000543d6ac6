// One Runner: status, its printers, discovery and adoption, context parameters and jobs.

import { navigate, ROOT } from "../app.js";
import { del, get, listAll, page, post } from "../lib/api.js";
import { contextEditor } from "../lib/context.js";
import { add, h, replace } from "../lib/dom.js";
import { ago, when } from "../lib/format.js";
import { jobView } from "../lib/jobview.js";
import { apiRules } from "../lib/schema.js";
import { can } from "../lib/session.js";
import {
  badge,
  button,
  confirmDialog,
  definitionList,
  dialog,
  field,
  form,
  input,
  notify,
  pageHeader,
  pagedList,
  section,
  table,
} from "../lib/ui.js";

/** Discovery findings with an "Adopt" button each (operators); `onAdopted(printer)` after one. */
export function findingsTable(findings, onAdopted) {
  return table(
    [
      { title: "Address", render: (f) => h("code", f.address) },
      { title: "Model", render: (f) => f.model || "" },
      { title: "Density", render: (f) => (f.dpi ? `${f.dpi} dpi` : "") },
      { title: "Status", render: (f) => badge(f.status || "unknown") },
      {
        title: "",
        render: (f) =>
          can("operator")
            ? button(`Adopt ${f.address}`, () => adopt(f, onAdopted), { class: "primary" })
            : "",
      },
    ],
    findings,
    { empty: "No printer answered at these addresses." },
  );
}

async function adopt(finding, onAdopted) {
  const rules = await apiRules();
  const name = rules.constrain(
    input({ name: "name", required: true, value: finding.model ? `${finding.model} ${finding.address}` : "" }),
    "createPrinter",
    "name",
    { hint: "no /, not starting with a space" },
  );
  const { close } = dialog(
    `Adopt the printer at ${finding.address}`,
    form([field("Printer name", name, { help: "People and flows print to this name." })], async () => {
      const printer = await post("/printers", { finding_id: finding.id, name: name.value.trim() });
      close();
      notify(`${printer.name} adopted.`);
      await onAdopted?.(printer);
    }, { submitLabel: "Adopt printer" }),
  );
}

export async function render(main, { id }) {
  const runner = await get(`/runners/${id}`);
  const group = await listAll("/runner-groups").then((all) => all.find((g) => g.id === runner.group_id)).catch(() => null);
  const cleanups = [];
  const actions = [];
  if (can("admin")) {
    actions.push(
      button("Remove Runner", async () => {
        if (!(await confirmDialog("Remove this Runner?", `${runner.name} is refused at once and must enroll again.`, "Remove", { danger: true }))) return;
        await del(`/runners/${id}`);
        notify("Runner removed.");
        navigate(`${ROOT}/runners`);
      }, { class: "danger" }),
    );
  }
  add(main, 
    pageHeader(runner.name, { crumbs: [[`${ROOT}/runners`, "Runners"]], actions }),
    section(
      "Status",
      definitionList([
        ["Status", runner.status_since ? [badge(runner.status), ` since ${when(runner.status_since)}`] : badge(runner.status)],
        ["Last seen", `${ago(runner.last_seen_at)} (${when(runner.last_seen_at)})`],
        [
          "Printed offline, not synced",
          runner.unsynced_offline_labels ? `${runner.unsynced_offline_labels} labels, the oldest ${when(runner.oldest_unsynced_at)}` : "none",
        ],
        ["Group", group ? group.name : runner.group_id],
        ["Host", runner.hostname],
        ["Runner version", runner.version],
        ["Id", h("code", runner.id)],
      ]),
    ),
  );

  const printersOut = h("div");
  const loadPrinters = async () => {
    const printers = await listAll("/printers", { runner_id: id });
    replace(
      printersOut,
      table(
        [
          { title: "Printer", render: (p) => p.name },
          { title: "Address", render: (p) => h("code", p.uri) },
          { title: "Language", render: (p) => `${p.language.toUpperCase()} ${p.dpi} dpi` },
          { title: "Model", render: (p) => p.model || "" },
          { title: "Status", render: (p) => [badge(p.status || "unknown"), p.status_at ? ` ${ago(p.status_at)}` : ""] },
        ],
        printers,
        { empty: "No printer adopted on this Runner." },
      ),
    );
  };
  add(main, section("Printers", printersOut));
  loadPrinters();

  if (can("operator")) {
    const targets = input({ name: "targets", required: true, placeholder: "192.168.1.0/24, 10.0.0.5:9100" });
    const out = h("div");
    add(main, 
      section(
        "Discover printers",
        form(
          [field("Addresses to search", targets, { help: "Private or link-local addresses, host:port or CIDR ranges, comma separated." })],
          async () => {
            const job = await post(`/runners/${id}/discovery`, { targets: targets.value.split(/[\s,]+/).filter(Boolean) });
            const view = jobView(job.id);
            cleanups.push(() => view.stop());
            const findings = h("div");
            replace(out, view.el, findings);
            const final = await view.done;
            replace(findings, findingsTable(final.result?.findings || [], loadPrinters));
            await loadPrinters();
          },
          { submitLabel: "Search" },
        ),
        out,
      ),
    );
  }
  if (can("operator", "designer")) {
    add(main, section("Context parameters (Runner level, wins over group and deployment)", contextEditor(`/runners/${id}/context`, { level: "this Runner", operation: "putRunnerContextParameter" })));
  }
  if (can("operator")) {
    add(main, 
      section(
        "Jobs",
        pagedList(
          (cursor) => page(`/runners/${id}/jobs`, {}, cursor),
          (rows) =>
            table(
              [
                { title: "Job", render: (j) => h("a", { href: `${ROOT}/jobs/${j.id}` }, j.id) },
                { title: "Kind", render: (j) => j.kind },
                { title: "Status", render: (j) => badge(j.status) },
                { title: "Outcome", render: (j) => (j.outcome ? [badge(j.outcome), j.outcome_reason ? ` ${j.outcome_reason}` : ""] : "") },
                { title: "Created", render: (j) => when(j.created_at) },
              ],
              rows,
              { empty: "No jobs yet." },
            ),
        ),
      ),
    );
  }
  return () => cleanups.forEach((stop) => stop());
}
