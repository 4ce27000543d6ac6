// One deployment: its stages, each stage's Runners, approve and roll back; its context
// parameters and printer aliases.

import { ROOT } from "../app.js";
import { del, get, listAll, post, put } from "../lib/api.js";
import { contextEditor } from "../lib/context.js";
import { add, h, replace } from "../lib/dom.js";
import { ago, author, when } from "../lib/format.js";
import { apiRules } from "../lib/schema.js";
import { can } from "../lib/session.js";
import { badge, button, definitionList, dialog, field, form, input, notify, pageHeader, section, select, showError, table } from "../lib/ui.js";

const MOVING = new Set(["awaiting_approval", "rolling_out"]);
export const ALIAS_HINT = "up to 64 letters, digits and _, not starting with a digit";

// The offline policy in one line: whether Runners print without the service, and its bounds.
const offlineNote = (policy) =>
  policy && policy.allowed
    ? badge("active", `prints offline: up to ${policy.max_hours} h, ${policy.max_labels} labels`)
    : badge("pending", "no offline printing");

export async function render(main, { id }) {
  let deployment = await get(`/deployments/${id}`);
  const [flow, groups, runners, printers, rules] = await Promise.all([
    get(`/flows/${deployment.flow_id}`).catch(() => null),
    listAll("/runner-groups").catch(() => []),
    listAll("/runners").catch(() => []),
    listAll("/printers").catch(() => []),
    apiRules(),
  ]);
  const groupName = Object.fromEntries(groups.map((g) => [g.id, g.name]));
  const runnerById = Object.fromEntries(runners.map((r) => [r.id, r]));
  const printerName = Object.fromEntries(printers.map((p) => [p.id, p.name]));

  const header = h("div");
  const stages = h("div", { class: "stages" });
  let timer = null;

  const approve = (stage) =>
    new Promise((resolve) => {
      const comment = rules.constrain(input({ name: "comment", placeholder: "optional" }), "postDeploymentApproval", "comment");
      const groupsText = stage.group_ids.map((g) => groupName[g] || g).join(", ");
      const again = stage.status !== "awaiting_approval";
      const title = again ? `Approve the changes of stage ${stage.index + 1}` : `Approve stage ${stage.index + 1}`;
      const text = again
        ? `The Runners of ${groupsText} will run this deployment's context and printer aliases as they are now (see below).`
        : `The Runners of ${groupsText} will run ${flow ? flow.name : deployment.flow_id} v${deployment.version}.`;
      const { close } = dialog(
        title,
        form(
          [h("p", text), field("Comment", comment)],
          async () => {
            deployment = await post(`/deployments/${id}/approval`, { stage: stage.index, comment: comment.value.trim() || undefined });
            close(true);
            notify(again ? `The changes of stage ${stage.index + 1} are approved.` : `Stage ${stage.index + 1} approved.`);
            draw();
          },
          { submitLabel: title },
        ),
        { onClose: resolve },
      );
    });

  // What an approval of the stage would approve now: its first, or the changes made since.
  const approvable = (stage) => stage.status === "awaiting_approval" || stage.changed_since_approval || stage.changes_await_approval;
  const changesNote = (stage) => {
    if (stage.changes_await_approval) {
      return [badge("held", "changes wait for approval"), " Its Runners keep the context and printers they ran until the stage is approved again."];
    }
    if (stage.changed_since_approval) return [badge("warning", "changed since approval"), " Context or printer aliases changed after this approval."];
    return null;
  };

  const rollback = () =>
    new Promise((resolve) => {
      const comment = rules.constrain(input({ name: "comment", placeholder: "optional" }), "postDeploymentRollback", "comment");
      const { close } = dialog(
        "Roll back this deployment",
        form(
          [
            h("p", "Every group of this deployment goes back to the version of this flow that ran there before (or to none), at once and without approval."),
            field("Comment", comment),
          ],
          async () => {
            deployment = await post(`/deployments/${id}/rollback`, { comment: comment.value.trim() || undefined });
            close(true);
            notify("Rolled back.");
            draw();
          },
          { submitLabel: "Roll back" },
        ),
        { onClose: resolve },
      );
    });

  function draw() {
    const ended = ["rolled_back", "superseded"].includes(deployment.status);
    replace(
      header,
      pageHeader(`Deployment of ${flow ? flow.name : deployment.flow_id} v${deployment.version}`, {
        crumbs: [[`${ROOT}/deployments`, "Deployments"]],
        actions: can("operator") && !ended ? [button("Roll back", rollback, { class: "danger" })] : [],
      }),
      h(
        "div",
        { class: "summary" },
        badge(deployment.status),
        deployment.changed_since_approval ? badge("warning", "changed since approval") : null,
        h("code", deployment.id),
        `created ${when(deployment.created_at)} by ${author(deployment.author)}`,
        offlineNote(deployment.offline),
      ),
    );
    replace(
      stages,
      deployment.stages.map((stage) =>
        h(
          "article",
          { class: ["stage", stage.status], "aria-label": `Stage ${stage.index + 1}` },
          h("h3", `Stage ${stage.index + 1}`, badge(stage.status)),
          definitionList([
            ["Groups", stage.group_ids.map((g) => groupName[g] || g).join(", ") || "none"],
            ["Approved", stage.approved_at ? `${when(stage.approved_at)} by ${stage.approved_by}` : "not yet"],
            ...(changesNote(stage) ? [["Changes", changesNote(stage)]] : []),
          ]),
          table(
            [
              { title: "Runner", render: (r) => h("a", { href: `${ROOT}/runners/${r.runner_id}` }, runnerById[r.runner_id]?.name || r.runner_id) },
              {
                title: "Runner status",
                render: (r) => (runnerById[r.runner_id] ? [badge(runnerById[r.runner_id].status), ` ${ago(runnerById[r.runner_id].last_seen_at)}`] : "—"),
              },
              { title: "Rollout", render: (r) => badge(r.status) },
              { title: "Detail", render: (r) => r.detail || "" },
            ],
            stage.runners,
            { empty: "No Runner in these groups yet." },
          ),
          approvable(stage) && can("approver") && !ended
            ? h(
                "div",
                { class: "actions" },
                button(stage.status === "awaiting_approval" ? `Approve stage ${stage.index + 1}` : `Approve the changes of stage ${stage.index + 1}`, () => approve(stage), {
                  class: "primary",
                }),
              )
            : null,
        ),
      ),
    );
  }

  // A change of aliases or context may make a stage "changed since approval" (or hold it).
  const refresh = async () => {
    deployment = await get(`/deployments/${id}`);
    if (!document.querySelector("dialog[open]")) draw();
  };

  async function poll() {
    try {
      if (MOVING.has(deployment.status) || deployment.changed_since_approval) await refresh();
    } catch {
      /* keep the last state on a failed poll */
    }
    timer = window.setTimeout(poll, 3000);
  }

  const aliases = h("div");
  const loadAliases = async () => {
    try {
      const items = await listAll(`/deployments/${id}/printers`);
      replace(
        aliases,
        table(
          [
            { title: "Alias", render: (a) => h("code", a.alias) },
            { title: "Printer", render: (a) => printerName[a.printer_id] || a.printer_id },
            { title: "Per Runner", render: (a) => Object.entries(a.by_runner || {}).map(([r, p]) => `${runnerById[r]?.name || r}: ${printerName[p] || p}`).join("; ") },
            {
              title: "",
              render: (a) =>
                can("operator")
                  ? button(`Remove ${a.alias}`, async () => {
                      await del(`/deployments/${id}/printers/${encodeURIComponent(a.alias)}`);
                      await loadAliases();
                      await refresh();
                    }, { class: "danger" })
                  : "",
            },
          ],
          items,
          { empty: "No printer aliases." },
        ),
      );
    } catch (error) {
      showError(aliases, error);
    }
  };
  const aliasName = rules.constrain(input({ name: "alias", required: true }), "putDeploymentPrinter", "name", { hint: ALIAS_HINT });
  const aliasPrinter = select(printers.map((p) => [p.id, p.name]), { name: "printer_id", required: true });

  draw();
  add(main, 
    header,
    section("Stages", stages),
    section(
      "Printer aliases",
      aliases,
      can("operator") && printers.length
        ? form(
            [h("div", { class: "row" }, field("Alias", aliasName), field("Printer", aliasPrinter))],
            async (formEl) => {
              await put(`/deployments/${id}/printers/${encodeURIComponent(aliasName.value.trim())}`, { printer_id: aliasPrinter.value });
              formEl.reset();
              await loadAliases();
              await refresh();
            },
            { submitLabel: "Assign printer" },
          )
        : null,
    ),
    can("operator", "designer") ? section("Context parameters (deployment level)", contextEditor(`/deployments/${id}/context`, { level: "the deployment", operation: "putDeploymentContextParameter", onChange: refresh })) : null,
  );
  loadAliases();
  timer = window.setTimeout(poll, 3000);
  return () => window.clearTimeout(timer);
}
