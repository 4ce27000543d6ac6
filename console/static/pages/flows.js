// Flows: the automations, newest change first; designers start a new one in the editor.

import { navigate, ROOT } from "../app.js";
import { page, post } from "../lib/api.js";
import { add, h } from "../lib/dom.js";
import { ago, when } from "../lib/format.js";
import { apiRules } from "../lib/schema.js";
import { can } from "../lib/session.js";
import { button, dialog, field, form, input, pageHeader, pagedList, table } from "../lib/ui.js";

async function newFlow() {
  const rules = await apiRules();
  const name = rules.constrain(input({ name: "name", required: true }), "createFlow", "name");
  const description = rules.constrain(h("textarea", { name: "description", rows: 2 }), "createFlow", "description");
  const { close } = dialog(
    "New flow",
    form([field("Name", name), field("Description", description, { hint: "(optional)" })], async () => {
      const created = await post("/flows", {
        name: name.value.trim(),
        description: description.value.trim() || undefined,
        comment: "Started in the editor",
      });
      close();
      navigate(`${ROOT}/flows/${created.id}/edit`);
    }, { submitLabel: "Create and edit" }),
  );
}

export async function render(main) {
  add(main,
    pageHeader("Flows", {
      subtitle: "Automations that Runners run: built in the editor, through the API or by agents.",
      actions: can("designer") ? [button("New flow", newFlow, { class: "primary" })] : [],
    }),
    pagedList(
      (cursor) => page("/flows", {}, cursor),
      (rows, options) =>
        table(
          [
            { title: "Name", render: (f) => h("a", { href: `${ROOT}/flows/${f.id}` }, f.name) },
            { title: "Description", render: (f) => f.description || "" },
            { title: "Latest version", render: (f) => `v${f.latest_version}` },
            { title: "Changed", render: (f) => h("time", { datetime: f.updated_at, title: when(f.updated_at) }, ago(f.updated_at)) },
            {
              title: "",
              render: (f) => h("a", { href: `${ROOT}/flows/${f.id}/edit`, "aria-label": `Open ${f.name} in the editor` }, can("designer") ? "Edit" : "Open in the editor"),
            },
          ],
          rows,
          { ...options, empty: "No flows yet." },
        ),
    ),
  );
}
