// The audit log: who did what to which thing, newest first, with filters.

import { page } from "../lib/api.js";
import { add, h, nextId, replace } from "../lib/dom.js";
import { actorKind, rfc3339, when } from "../lib/format.js";
import { operationIds } from "../lib/schema.js";
import { badge, field, input, pageHeader, pagedList, pre, table } from "../lib/ui.js";

export async function render(main, _params, query) {
  const operations = await operationIds();
  const listId = nextId("ops");
  // The API filters by who acted (a username or an agent's token subject), not by kind.
  const actor = input({ name: "actor", placeholder: "e.g. ines or label-bot", value: query.get("actor") || "", autocomplete: "off" });
  const operation = input({ name: "operation", list: listId, placeholder: "e.g. postLabelStatus" });
  const target = input({ name: "target", placeholder: "lbl_…, dep_…", value: query.get("target") || "" });
  const since = input({ name: "since", type: "datetime-local" });
  const until = input({ name: "until", type: "datetime-local" });
  const list = h("div");
  const load = () =>
    replace(
      list,
      pagedList(
        (cursor) =>
          page(
            "/audit-log",
            {
              actor: actor.value.trim() || undefined,
              operation: operation.value.trim() || undefined,
              target: target.value.trim() || undefined,
              since: rfc3339(since.value),
              until: rfc3339(until.value),
            },
            cursor,
          ),
        (rows) =>
          table(
            [
              { title: "When", render: (e) => when(e.at) },
              { title: "Who", render: (e) => [badge(actorKind(e.actor)), ` ${e.subject}`] },
              { title: "Operation", render: (e) => h("code", e.operation_id) },
              { title: "Target", render: (e) => (e.target_id ? h("code", e.target_id) : "") },
              { title: "Outcome", render: (e) => [badge(e.outcome), e.code ? h("code", ` ${e.code}`) : ""] },
              { title: "Details", render: (e) => (e.details ? h("details", h("summary", "Show"), pre(e.details)) : "") },
            ],
            rows,
            { empty: "No entries match." },
          ),
      ),
    );
  for (const control of [actor, operation, target, since, until]) control.addEventListener("change", load);
  add(main, 
    pageHeader("Audit log"),
    h("datalist", { id: listId }, operations.map((o) => h("option", { value: o }))),
    h(
      "div",
      { class: "filters", role: "search", "aria-label": "Filter the audit log" },
      field("Who", actor, { help: "A username or an agent's subject." }),
      field("Operation", operation),
      field("Target", target),
      field("Since", since),
      field("Until", until),
    ),
    list,
  );
  load();
}
