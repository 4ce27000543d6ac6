// Flows: the automations, newest change first.

import { ROOT } from "../app.js";
import { page } from "../lib/api.js";
import { add, h } from "../lib/dom.js";
import { ago, when } from "../lib/format.js";
import { pageHeader, pagedList, table } from "../lib/ui.js";

export async function render(main) {
  add(main, 
    pageHeader("Flows", { subtitle: "Automations that Runners run; authored through the API or by agents, reviewed here." }),
    pagedList(
      (cursor) => page("/flows", {}, cursor),
      (rows, options) =>
        table(
          [
            { title: "Name", render: (f) => h("a", { href: `${ROOT}/flows/${f.id}` }, f.name) },
            { title: "Description", render: (f) => f.description || "" },
            { title: "Latest version", render: (f) => `v${f.latest_version}` },
            { title: "Changed", render: (f) => h("time", { datetime: f.updated_at, title: when(f.updated_at) }, ago(f.updated_at)) },
          ],
          rows,
          { ...options, empty: "No flows yet." },
        ),
    ),
  );
}
