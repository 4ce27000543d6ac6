// Context parameters at one level (deployment, Runner group, Runner): the more specific wins.

import { del, listAll, put } from "./api.js";
import { add, h, replace } from "./dom.js";
import { ago } from "./format.js";
import { apiRules } from "./schema.js";
import { can } from "./session.js";
import { button, field, form, input, loading, notify, showError, table } from "./ui.js";

/** `path` is the level's …/context collection; `operation` the operationId that sets one there. */
export function contextEditor(path, { level = "this level", operation, onChange } = {}) {
  const list = h("div");
  const el = h("div", { class: "context" }, list);
  const load = async () => {
    replace(list, loading());
    try {
      const items = await listAll(path);
      replace(
        list,
        table(
          [
            { title: "Name", render: (p) => h("code", p.name) },
            { title: "Value", render: (p) => h("code", JSON.stringify(p.value)) },
            { title: "Changed", render: (p) => `${p.updated_by} · ${ago(p.updated_at)}` },
            {
              title: "",
              render: (p) =>
                can("operator")
                  ? button(`Remove ${p.name}`, async () => {
                      await del(`${path}/${encodeURIComponent(p.name)}`);
                      notify(`${p.name} removed.`);
                      await load();
                      onChange?.();
                    }, { class: "danger" })
                  : "",
            },
          ],
          items,
          { empty: `No context parameters at ${level}.` },
        ),
      );
    } catch (error) {
      showError(list, error);
    }
  };
  if (can("operator")) {
    const name = input({ name: "name", required: true, autocomplete: "off" });
    apiRules().then((rules) =>
      rules.constrain(name, operation, "name", { hint: "up to 64 letters, digits and _ . -, starting with a letter or _" }),
    );
    const value = input({ name: "value", required: true, placeholder: '"Halle 1", 42, true or {"a": 1}' });
    add(el, 
      form(
        [h("div", { class: "row" }, field("Parameter name", name), field("Value (JSON, or plain text)", value))],
        async (formEl) => {
          let parsed;
          try {
            parsed = JSON.parse(value.value);
          } catch {
            parsed = value.value;
          }
          await put(`${path}/${encodeURIComponent(name.value.trim())}`, { value: parsed });
          notify(`${name.value} set at ${level}.`);
          formEl.reset();
          await load();
          onChange?.();
        },
        { submitLabel: "Set parameter" },
      ),
    );
  }
  load();
  return el;
}
