// Runners and their groups: status, enrollment approvals, enrollment tokens and installers,
// printer discovery per group, and each group's context parameters.

import { ROOT } from "../app.js";
import { listAll, page, post } from "../lib/api.js";
import { contextEditor } from "../lib/context.js";
import { add, h, replace } from "../lib/dom.js";
import { ago, bytes, when } from "../lib/format.js";
import { jobView } from "../lib/jobview.js";
import { apiRules } from "../lib/schema.js";
import { can } from "../lib/session.js";
import {
  badge,
  button,
  checkbox,
  dialog,
  field,
  form,
  input,
  loading,
  notify,
  pageHeader,
  pagedList,
  secretDialog,
  section,
  showError,
  table,
  tabs,
} from "../lib/ui.js";
import { findingsTable } from "./runner.js";

function runnersTable(rows, groupName) {
  return table(
    [
      { title: "Runner", render: (r) => h("a", { href: `${ROOT}/runners/${r.id}` }, r.name) },
      { title: "Group", render: (r) => groupName[r.group_id] || r.group_id },
      { title: "Status", render: (r) => badge(r.status) },
      { title: "Last seen", render: (r) => h("time", { datetime: r.last_seen_at || "", title: when(r.last_seen_at) }, ago(r.last_seen_at)) },
      { title: "Version", render: (r) => r.version || "" },
      { title: "Host", render: (r) => r.hostname || "" },
    ],
    rows,
    { empty: "No Runner has enrolled yet. Create a group, then an enrollment token or an installer." },
  );
}

export async function render(main, _params, query) {
  let groups = await listAll("/runner-groups");
  const rules = await apiRules();
  const groupName = () => Object.fromEntries(groups.map((g) => [g.id, g.name]));
  const cleanups = [];

  function renderRunners(panel) {
    const list = pagedList((cursor) => page("/runners", {}, cursor), (rows) => runnersTable(rows, groupName()));
    add(panel, button("Refresh", () => list.reload()), list);
  }

  function groupPanel(group) {
    const discoveryOut = h("div");
    const targets = input({ name: "targets", required: true, placeholder: "192.168.1.0/24, 10.0.0.5:9100" });
    const parts = [
      h("p", { class: "muted" }, group.description || ""),
      h("p", h("code", group.id)),
    ];
    if (can("admin")) {
      const approval = checkbox("An admin approves each Runner that uses it", { name: "needs_approval" });
      parts.push(
        h("h3", "Bring a Runner into this group"),
        approval,
        h(
          "div",
          { class: "actions" },
          button("Create an enrollment token", async () => {
            const token = await post(`/runner-groups/${group.id}/enrollment-tokens`, {
              needs_approval: approval.querySelector("input").checked,
            });
            secretDialog(
              "Enrollment token",
              token.token,
              `Shown only now; valid until ${when(token.expires_at)}, once. On the site: etikett-runner --server ${window.location.origin} --agent-url AGENT_URL --ca-file CA --enrollment-token TOKEN --state-dir DIR`,
            );
          }),
          button("Download an installer", async () => {
            const installer = await post(`/runner-groups/${group.id}/installer`, {
              needs_approval: approval.querySelector("input").checked,
            });
            dialog(
              "Installer ready",
              [
                h("p", `A zip (${bytes(installer.size_bytes)}) with the Runner, its configuration, the CA bundle and a fresh one-time token; install.sh (systemd) and install.ps1 (Windows service) inside.`),
                h("p", h("a", { href: installer.download_url, download: "", class: "button primary" }, "Download the installer")),
                h("p", { class: "muted small" }, `The link works until ${when(installer.download_expires_at)}; the token until ${when(installer.enrollment_token_expires_at)}.`),
              ],
            );
          }),
        ),
      );
    }
    if (can("operator")) {
      parts.push(
        h("h3", "Discover printers"),
        form(
          [field("Addresses to search (every online Runner of the group searches)", targets, { help: "Private or link-local addresses or CIDR ranges, comma separated." })],
          async () => {
            const list = targets.value.split(/[\s,]+/).filter(Boolean);
            const answer = await post("/printers/discover", { group_id: group.id, targets: list });
            replace(
              discoveryOut,
              answer.jobs.map((job) => {
                const view = jobView(job.id);
                cleanups.push(() => view.stop());
                const findings = h("div");
                view.done.then((final) => replace(findings, findingsTable(final.result?.findings || [])));
                return h("div", { class: "panel" }, view.el, findings);
              }),
            );
          },
          { submitLabel: "Search" },
        ),
        discoveryOut,
      );
    }
    if (can("operator", "designer")) {
      parts.push(h("h3", "Context parameters (group level)"), contextEditor(`/runner-groups/${group.id}/context`, { level: `group ${group.name}`, operation: "putRunnerGroupContextParameter" }));
    }
    return section(group.name, parts);
  }

  function renderGroups(panel) {
    const name = rules.constrain(input({ name: "name", required: true }), "createRunnerGroup", "name");
    const description = rules.constrain(input({ name: "description" }), "createRunnerGroup", "description");
    add(panel, 
      can("admin")
        ? section(
            "New group",
            form(
              [h("div", { class: "row" }, field("Name", name), field("Description", description))],
              async (el) => {
                const group = await post("/runner-groups", { name: name.value.trim(), description: description.value.trim() || undefined });
                groups = [...groups, group];
                el.reset();
                notify(`Group ${group.name} created.`);
                sections.refresh("groups");
              },
              { submitLabel: "Create group" },
            ),
          )
        : null,
      groups.length ? groups.map(groupPanel) : h("p", { class: "empty" }, "No Runner groups yet."),
    );
  }

  function renderEnrollments(panel) {
    const out = h("div", loading());
    const load = async () => {
      try {
        const items = await listAll("/runner-enrollments", { status: "pending" });
        replace(
          out,
          table(
            [
              { title: "Enrollment", render: (e) => h("code", e.id) },
              { title: "Group", render: (e) => groupName()[e.group_id] || e.group_id },
              { title: "Host", render: (e) => e.hostname || "" },
              { title: "Version", render: (e) => e.version || "" },
              { title: "Asked", render: (e) => ago(e.created_at) },
              {
                title: "",
                render: (e) =>
                  can("admin")
                    ? button(`Approve ${e.hostname || e.id}`, async () => {
                        await post(`/runner-enrollments/${e.id}/approval`);
                        notify("Enrollment approved; the Runner gets its certificate.");
                        await load();
                      }, { class: "primary", "aria-label": `Approve ${e.hostname || e.id} (${e.id})` })
                    : "",
              },
            ],
            items,
            { empty: "No enrollment waits for approval." },
          ),
        );
      } catch (error) {
        showError(out, error);
      }
    };
    add(panel, button("Refresh", load), out);
    load();
  }

  const items = [
    { id: "runners", label: "Runners", render: renderRunners },
    { id: "groups", label: "Groups", render: renderGroups },
  ];
  if (can("admin", "operator")) items.push({ id: "enrollments", label: "Enrollment approvals", render: renderEnrollments });
  const sections = tabs(items, { initial: query.get("tab") || "runners", label: "Runner sections" });
  add(main, pageHeader("Runners"), sections);
  return () => cleanups.forEach((stop) => stop());
}
