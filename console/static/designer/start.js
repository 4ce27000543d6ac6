// Where a new label starts: a Vorlage (on its own stock, a media preset or any size, kept in
// place or scaled to fit), a media preset, a size, blank, an imported ZPL or gLabels file (with
// the import report: what could not be carried over), or a copy of another label. A new label
// opens in the designer; an import shows its report first.

import { navigate, ROOT } from "../app.js";
import { listAll, post, upload } from "../lib/api.js";
import { add, h, nextId, replace } from "../lib/dom.js";
import { mm } from "../lib/format.js";
import { apiRules } from "../lib/schema.js";
import { badge, dialog, field, form, input, select, table, tabs } from "../lib/ui.js";

export const IMPORT_ACCEPT = ".zpl,.prn,.txt,.glabels,text/plain,application/x-glabels";

function designerOf(label) {
  return `${ROOT}/labels/${label.id}/design`;
}

function presetText(p) {
  return `${p.brand} ${p.part_number || ""} — ${p.description} (${p.width_mm} × ${p.height_mm} mm, ${p.dpi} dpi)`;
}

/** The import report: what the file gave and what it could not carry over. */
export function importReport(answer) {
  const labels = answer.documents;
  return h(
    "div",
    { class: "dz-import-report", role: "status" },
    h("p", h("strong", `${answer.source.name} (${answer.source.format.toUpperCase()}): `), `${labels.length} label${labels.length === 1 ? "" : "s"} created, each as a draft version 1.`),
    h("ul", { class: "dz-imported" }, labels.map((label) => h("li", h("a", { href: designerOf({ id: label.label_id }) }, `Open ${label.name} in the designer`)))),
    answer.report.length
      ? table(
          [
            { title: "Where", render: (entry) => (entry.line ? `line ${entry.line}` : entry.element || "—") },
            { title: "Severity", render: (entry) => badge(entry.severity) },
            { title: "Not carried over exactly", render: (entry) => entry.message },
          ],
          answer.report,
          { caption: "Import report" },
        )
      : h("p", { class: "muted" }, "Everything in the file was carried over exactly."),
  );
}

export async function newLabelDialog() {
  const [vorlagen, presets, rules] = await Promise.all([listAll("/label-vorlagen"), listAll("/media-presets"), apiRules()]);
  const name = rules.constrain(input({ name: "name", required: true, placeholder: "e.g. Versandetikett Halle 1" }), "createLabel", "name");
  let mode = "vorlage";
  const vorlageName = nextId("vorlage");
  const vorlageList = h(
    "fieldset",
    { class: "choices" },
    h("legend", "Vorlage"),
    vorlagen.map((v, index) => {
      const id = nextId("v");
      return h(
        "div",
        { class: "choice" },
        h("input", { type: "radio", name: vorlageName, id, value: v.id, checked: index === 0 }),
        h(
          "label",
          { for: id },
          h("strong", v.name),
          h("span", { class: "muted small" }, ` ${v.width_mm} × ${v.height_mm} mm · ${v.category}`),
          h("span", { class: "small block" }, v.description),
        ),
      );
    }),
  );
  // The stock a Vorlage is laid out on: its own, a preset, or any size.
  const stock = select([["own", "The Vorlage's own size and density"], ...presets.map((p) => [`preset:${p.id}`, presetText(p)]), ["size", "Another size…"]], { name: "stock" });
  const stockWidth = rules.constrain(input({ name: "stock_width", type: "number", min: "1", step: "0.1", value: "100" }), "createLabelFromDimensions", "width_mm");
  const stockHeight = rules.constrain(input({ name: "stock_height", type: "number", min: "1", step: "0.1", value: "50" }), "createLabelFromDimensions", "height_mm");
  const stockDpi = select([["203", "203 dpi"], ["300", "300 dpi"], ["600", "600 dpi"]], { name: "stock_dpi" });
  const fit = select([["keep", "Keep every object where it is (findings show what does not fit)"], ["scale", "Scale the layout to fit, centred"]], { name: "fit" });
  const stockSize = h("div", { class: "row", hidden: true }, field("Width (mm)", stockWidth), field("Height (mm)", stockHeight), field("Density", stockDpi));
  const fitField = field("On other stock", fit);
  fitField.hidden = true;
  stock.addEventListener("change", () => {
    stockSize.hidden = stock.value !== "size";
    fitField.hidden = stock.value === "own";
  });

  const preset = select(presets.map((p) => [p.id, presetText(p)]), { name: "preset" });
  const size = (fieldName, value) =>
    rules.constrain(input({ name: fieldName, type: "number", min: "1", step: "0.1", value, required: true }), "createLabelFromDimensions", fieldName);
  const width = size("width_mm", "100");
  const height = size("height_mm", "50");
  const dpi = select([["203", "203 dpi"], ["300", "300 dpi"], ["600", "600 dpi"]], { name: "dpi" });
  const file = h("input", { type: "file", name: "file", accept: IMPORT_ACCEPT });
  const importDpi = select([["203", "203 dpi"], ["300", "300 dpi"], ["600", "600 dpi"]], { name: "import_dpi" });
  const report = h("div", { class: "dz-import-result", "aria-live": "polite" });
  const labelChoice = h("select", { name: "source" }, h("option", { value: "" }, "Loading labels…"));
  listAll("/labels", {}, 1000).then((labels) => {
    replace(labelChoice, labels.map((label) => h("option", { value: label.id }, `${label.name} (${mm(label.size)}, v${label.latest_version})`)));
  });

  let submit = null;
  const sources = tabs(
    [
      { id: "vorlage", label: "From a Vorlage", render: (p) => add(p, vorlageList, field("Stock", stock), stockSize, fitField) },
      { id: "preset", label: "Media preset", render: (p) => add(p, field("Label stock", preset)) },
      {
        id: "dimensions",
        label: "Size",
        render: (p) => add(p, h("div", { class: "row" }, field("Width (mm)", width), field("Height (mm)", height), field("Density", dpi))),
      },
      { id: "blank", label: "Blank", render: (p) => add(p, h("p", "An empty label of the default size, to design from scratch.")) },
      {
        id: "import",
        label: "Import a file",
        render: (p) =>
          add(
            p,
            h("p", { class: "small" }, "A ZPL II file (one label per ^XA…^XZ) or a gLabels document. Each label becomes a new label; the report lists what could not be carried over exactly. The name comes from the file."),
            field("File", file),
            field("Density of the file's dots (ZPL)", importDpi),
            report,
          ),
      },
      { id: "copy", label: "Copy of a label", render: (p) => add(p, field("Label to copy", labelChoice)) },
    ],
    {
      label: "Start from",
      onChange: (id) => {
        mode = id;
        name.required = id !== "import";
        if (submit) submit.textContent = id === "import" ? "Import" : "Create label";
      },
    },
  );

  const create = async () => {
    const label = name.value.trim();
    if (mode === "vorlage") {
      const chosen = vorlageList.querySelector("input:checked");
      const body = { vorlageId: chosen.value, name: label };
      if (stock.value.startsWith("preset:")) body.preset_id = stock.value.slice(7);
      if (stock.value === "size") {
        body.size = { width_mm: Number(stockWidth.value), height_mm: Number(stockHeight.value) };
        body.dpi = Number(stockDpi.value);
      }
      if (stock.value !== "own") body.fit = fit.value;
      return post("/labels/from-vorlage", body);
    }
    if (mode === "preset") return post("/labels/from-preset", { preset_id: preset.value, name: label });
    if (mode === "dimensions") {
      return post("/labels/from-dimensions", { name: label, width_mm: Number(width.value), height_mm: Number(height.value), dpi: Number(dpi.value) });
    }
    if (mode === "copy") return post(`/labels/${encodeURIComponent(labelChoice.value)}/duplicate`, { name: label });
    return post("/labels", { name: label });
  };

  const body = form(
    [field("Name", name), sources],
    async () => {
      if (mode === "import") {
        const chosen = file.files?.[0];
        if (!chosen) {
          file.closest(".field")?.setError?.("Choose a ZPL or gLabels file.");
          file.focus();
          return;
        }
        const answer = await upload("/import", chosen, { query: { dpi: importDpi.value } });
        replace(report, importReport(answer));
        // Opening a label leaves the dialog (the router follows the link).
        for (const link of report.querySelectorAll("a")) link.addEventListener("click", () => close());
        report.querySelector("a")?.focus();
        return;
      }
      const created = await create();
      close();
      navigate(designerOf(created));
    },
    { submitLabel: "Create label" },
  );
  submit = body.querySelector("button[type=submit]");
  const { close } = dialog("New label", body, { wide: true });
}
