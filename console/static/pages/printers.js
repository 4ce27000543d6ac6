// Printers: every adopted printer with its Runner and last known status; declare or remove one.

import { ROOT } from "../app.js";
import { del, listAll, post } from "../lib/api.js";
import { add, h, replace } from "../lib/dom.js";
import { ago } from "../lib/format.js";
import { apiRules } from "../lib/schema.js";
import { can } from "../lib/session.js";
import { badge, button, confirmDialog, field, form, input, loading, notify, pageHeader, section, select, showError, table } from "../lib/ui.js";

export async function render(main) {
  const [runners, rules] = await Promise.all([listAll("/runners").catch(() => []), apiRules()]);
  const runnerById = Object.fromEntries(runners.map((r) => [r.id, r]));
  const out = h("div", loading());
  const load = async () => {
    try {
      const printers = await listAll("/printers");
      replace(
        out,
        table(
          [
            { title: "Printer", render: (p) => p.name },
            {
              title: "Runner",
              render: (p) => [
                h("a", { href: `${ROOT}/runners/${p.runner_id}` }, runnerById[p.runner_id]?.name || p.runner_id),
                runnerById[p.runner_id] ? [" ", badge(runnerById[p.runner_id].status)] : null,
              ],
            },
            { title: "Address", render: (p) => h("code", p.uri) },
            { title: "Language", render: (p) => `${p.language.toUpperCase()} · ${p.dpi} dpi` },
            { title: "Model", render: (p) => p.model || "" },
            { title: "Status", render: (p) => [badge(p.status || "unknown"), p.status_at ? ` ${ago(p.status_at)}` : ""] },
            {
              title: "",
              render: (p) =>
                can("operator")
                  ? button(`Remove ${p.name}`, async () => {
                      if (!(await confirmDialog(`Remove ${p.name}?`, "Prints to it are refused afterwards.", "Remove", { danger: true }))) return;
                      await del(`/printers/${p.id}`);
                      notify(`${p.name} removed.`);
                      await load();
                    }, { class: "danger" })
                  : "",
            },
          ],
          printers,
          { empty: "No printers yet: discover and adopt them on a Runner's page." },
        ),
      );
    } catch (error) {
      showError(out, error);
    }
  };
  add(main, pageHeader("Printers"), out);
  if (can("operator") && runners.length) {
    const name = rules.constrain(input({ name: "name", required: true }), "createPrinter", "name", { hint: "no /, not starting with a space" });
    const runner = select(runners.map((r) => [r.id, `${r.name} (${r.status})`]), { name: "runner_id" });
    const uri = input({ name: "uri", required: true, placeholder: "tcp://192.168.1.50:9100" });
    const language = select(rules.choices("createPrinter", "language", ["zpl", "tspl", "epl"]).map((l) => [l, l.toUpperCase()]), { name: "language" });
    const dpi = select(rules.choices("createPrinter", "dpi", [203, 300, 600]).map((d) => [String(d), `${d} dpi`]), { name: "dpi" });
    add(main, 
      section(
        "Declare a printer",
        form(
          [h("div", { class: "row" }, field("Name", name), field("Runner", runner), field("Address", uri), field("Language", language), field("Density", dpi))],
          async (el) => {
            const printer = await post("/printers", {
              name: name.value.trim(),
              runner_id: runner.value,
              uri: uri.value.trim(),
              language: language.value,
              dpi: Number(dpi.value),
            });
            el.reset();
            notify(`${printer.name} declared.`);
            await load();
          },
          { submitLabel: "Declare printer" },
        ),
      ),
    );
  }
  await load();
}
