// Deployments: rollouts of flow versions to Runner groups, stage by stage.

import { navigate, ROOT } from "../app.js";
import { listAll, page, post } from "../lib/api.js";
import { add, h, nextId, replace } from "../lib/dom.js";
import { author, when } from "../lib/format.js";
import { apiRules } from "../lib/schema.js";
import { can } from "../lib/session.js";
import { badge, button, checkbox, dialog, field, form, input, pageHeader, pagedList, select, table } from "../lib/ui.js";
import { ALIAS_HINT } from "./deployment.js";

const STATUSES = ["", "awaiting_approval", "rolling_out", "active", "failed", "rolled_back", "superseded"];

export function stageSummary(deployment) {
  return deployment.stages.map((s) => h("span", { class: "stage-chip" }, `${s.index + 1}: `, badge(s.status), " "));
}

export async function render(main, _params, query) {
  const flows = await listAll("/flows").catch(() => []);
  const flowNames = Object.fromEntries(flows.map((f) => [f.id, f.name]));
  const status = select(STATUSES.map((s) => [s, s ? s.replace(/_/g, " ") : "Any status"]), { name: "status" });
  const flowFilter = select([["", "Any flow"], ...flows.map((f) => [f.id, f.name])], { name: "flow" });
  const list = h("div");
  const load = () =>
    replace(
      list,
      pagedList(
        (cursor) => page("/deployments", { status: status.value || undefined, flow_id: flowFilter.value || undefined }, cursor),
        (rows) =>
          table(
            [
              { title: "Deployment", render: (d) => h("a", { href: `${ROOT}/deployments/${d.id}` }, d.id) },
              { title: "Flow", render: (d) => h("a", { href: `${ROOT}/flows/${d.flow_id}` }, flowNames[d.flow_id] || d.flow_id) },
              { title: "Version", render: (d) => `v${d.version}` },
              { title: "Status", render: (d) => badge(d.status) },
              { title: "Stages", render: (d) => stageSummary(d) },
              { title: "Created", render: (d) => `${when(d.created_at)} · ${author(d.author)}` },
            ],
            rows,
            { empty: "No deployments match." },
          ),
      ),
    );
  status.addEventListener("change", load);
  flowFilter.addEventListener("change", load);
  add(main, 
    pageHeader("Deployments", {
      actions: can("operator") ? [button("New deployment", () => newDeployment(flows), { class: "primary" })] : [],
    }),
    h("div", { class: "filters" }, field("Status", status), field("Flow", flowFilter)),
    list,
  );
  load();
  if (query.get("flow") && can("operator")) newDeployment(flows, query.get("flow"), query.get("version"));
}

/** The "New deployment" dialog; `aliases` are the printer aliases the flow prints to (a row
 * each, so only the printers remain to choose). */
export async function newDeployment(flows, flowId, version, { aliases = [] } = {}) {
  const [groups, printers, rules] = await Promise.all([listAll("/runner-groups"), listAll("/printers").catch(() => []), apiRules()]);
  const flow = select(flows.map((f) => [f.id, `${f.name} (latest v${f.latest_version})`]), { name: "flow_id", value: flowId || "" });
  const versionInput = input({ name: "version", type: "number", min: "1", step: "1", required: true });
  const syncVersion = () => {
    const chosen = flows.find((f) => f.id === flow.value);
    versionInput.value = version && flow.value === flowId ? version : chosen ? chosen.latest_version : 1;
  };
  flow.addEventListener("change", syncVersion);
  syncVersion();

  const stages = h("div", { class: "stage-editor" });
  const addStage = () => {
    const index = stages.children.length;
    const legendId = nextId("stage");
    stages.appendChild(
      h(
        "fieldset",
        { class: "choices inline stage-groups", "aria-labelledby": legendId },
        h("legend", { id: legendId }, `Stage ${index + 1}: Runner groups`),
        groups.map((g) => checkbox(g.name, { value: g.id, name: `stage-${index}` })),
      ),
    );
  };
  addStage();
  const printerRows = h("div");
  const addPrinter = (alias = "") => {
    printerRows.appendChild(
      h(
        "div",
        { class: "row printer-row" },
        field("Printer alias", rules.constrain(input({ name: "alias", placeholder: "e.g. shipping", value: alias }), "putDeploymentPrinter", "name", { hint: ALIAS_HINT })),
        field("Printer", select([["", "—"], ...printers.map((p) => [p.id, p.name])], { name: "printer" })),
      ),
    );
  };
  if (aliases.length) aliases.forEach((alias) => addPrinter(alias));
  else addPrinter();
  const context = h("textarea", { name: "context", rows: 3, spellcheck: "false" });
  context.value = "{}";

  const { close } = dialog(
    "New deployment",
    form(
      [
        h("div", { class: "row" }, field("Flow", flow), field("Version", versionInput)),
        stages,
        button("Add a stage", addStage, { class: "secondary" }),
        h("h3", "Printer aliases"),
        printerRows,
        button("Add a printer alias", () => addPrinter(), { class: "secondary" }),
        field("Context parameters (JSON object)", context),
      ],
      async () => {
        const stageList = [...stages.querySelectorAll("fieldset")].map((fs) => ({
          group_ids: [...fs.querySelectorAll("input:checked")].map((c) => c.value),
        }));
        const printerMap = {};
        for (const row of printerRows.querySelectorAll(".printer-row")) {
          const alias = row.querySelector("[name=alias]").value.trim();
          const printer = row.querySelector("[name=printer]").value;
          if (alias && printer) printerMap[alias] = printer;
        }
        let contextValue;
        try {
          contextValue = JSON.parse(context.value || "{}");
        } catch (error) {
          context.closest(".field").setError(`Not JSON: ${error.message}`);
          return;
        }
        const created = await post("/deployments", {
          flow_id: flow.value,
          version: Number(versionInput.value),
          stages: stageList,
          printers: printerMap,
          context: contextValue,
        });
        close();
        navigate(`${ROOT}/deployments/${created.id}`);
      },
      { submitLabel: "Create deployment" },
    ),
    { wide: true },
  );
}
