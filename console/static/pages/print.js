// Print a label: its form (with the form's CEL checks), a printer, copies, or a CSV data file for
// a data stream; then the job's messages and outcome, live.

import { ROOT } from "../app.js";
import { get, listAll, newIdempotencyKey as newKey, post, preview } from "../lib/api.js";
import { parseRecords, typed } from "../lib/csv.js";
import { add, h, nextId, replace } from "../lib/dom.js";
import { bytes, count } from "../lib/format.js";
import { jobView } from "../lib/jobview.js";
import { labelForm } from "../lib/labelform.js";
import { previewImage } from "../lib/raster.js";
import { apiRules } from "../lib/schema.js";
import { errorBox, field, form, input, pageHeader, section, select, showError, table } from "../lib/ui.js";

const MAX_RECORDS = 10000;

export async function render(main, { id }) {
  const [label, versions, printers, formAnswer, rules] = await Promise.all([
    get(`/labels/${id}`),
    listAll(`/labels/${id}/versions`),
    listAll("/printers"),
    get(`/labels/${id}/form`),
    apiRules(),
  ]);
  const document = (await get(`/labels/${id}/document`, { version: label.released_version || undefined })).document;
  const types = Object.fromEntries((document.variables || []).map((v) => [v.name, v.type]));
  const entered = (document.variables || []).filter((v) => !v.expression).map((v) => v.name);
  let jobPanel = null;
  let idempotencyKey = newKey();

  add(main, 
    pageHeader(`Print ${label.name}`, {
      crumbs: [
        [`${ROOT}/labels`, "Labels"],
        [`${ROOT}/labels/${id}`, label.name],
      ],
    }),
  );
  if (!label.released_version) {
    add(main, h("p", { class: "problem", role: "alert" }, "This label has no released version yet; an approver releases one first."));
    return undefined;
  }

  const approved = versions.filter((v) => v.status === "approved" && v.version !== label.released_version);
  const version = select(
    [["", `Released version (v${label.released_version})`], ...approved.map((v) => [String(v.version), `v${v.version} (approved)`])],
    { name: "version" },
  );
  const printer = select(
    printers.length
      ? printers.map((p) => [p.name, `${p.name} — ${p.language.toUpperCase()} ${p.dpi} dpi${p.status ? ` · ${p.status}` : ""}`])
      : [["", "No printer yet — adopt one on the Runners page"]],
    { name: "printer", required: true },
  );
  const copies = rules.constrain(input({ name: "copies", type: "number", step: "1", value: "1", required: true }), "postPrint", "copies");
  const modeName = nextId("mode");
  const modeOne = h("input", { type: "radio", name: modeName, id: nextId("m"), value: "one", checked: true });
  const modeFile = h("input", { type: "radio", name: modeName, id: nextId("m"), value: "file" });
  const modes = h(
    "fieldset",
    { class: "choices inline" },
    h("legend", "What to print"),
    h("div", { class: "choice" }, modeOne, h("label", { for: modeOne.id }, "One label from the form")),
    h("div", { class: "choice" }, modeFile, h("label", { for: modeFile.id }, "A data file (CSV): one label per row")),
  );

  const previewBox = h("div", { class: "preview-box small-preview", "aria-live": "polite" });
  let timer = null;
  const labelFields = labelForm(id, formAnswer.document, document, {
    onInput: () => {
      clearTimeout(timer);
      timer = setTimeout(updatePreview, 400);
    },
  });
  async function updatePreview() {
    try {
      const result = await preview(id, { version: Number(version.value) || label.released_version, variables: labelFields.values() });
      replace(previewBox, previewImage(result, "What will print"));
    } catch (error) {
      replace(previewBox, errorBox(error));
    }
  }
  const onePanel = h("div", { class: "preview-layout" }, h("div", labelFields.el), h("div", previewBox));

  const file = input({ type: "file", name: "data", accept: ".csv,text/csv,text/plain" });
  const fileInfo = h("div", { "aria-live": "polite" });
  let records = null;
  file.addEventListener("change", async () => {
    records = null;
    replace(fileInfo);
    const chosen = file.files[0];
    if (!chosen) return;
    const text = await chosen.text();
    const parsed = parseRecords(text);
    const unknown = parsed.columns.filter((c) => !(c in types) || !entered.includes(c));
    const missing = entered.filter((v) => !parsed.columns.includes(v));
    records = parsed.records.map((row) => {
      const out = {};
      for (const column of parsed.columns) {
        if (unknown.includes(column)) continue;
        const value = typed(row[column], types[column]);
        if (value !== undefined) out[column] = value;
      }
      return out;
    });
    replace(
      fileInfo,
      h("p", { role: "status" }, `${chosen.name} (${bytes(chosen.size)}): ${count(records.length, "record")}, columns ${parsed.columns.join(", ") || "none"}.`),
      unknown.length ? h("p", { class: "warning" }, `Ignored columns (not entered variables of this label): ${unknown.join(", ")}.`) : null,
      missing.length ? h("p", { class: "muted" }, `Not in the file (defaults or samples apply): ${missing.join(", ")}.`) : null,
      records.length > MAX_RECORDS ? h("p", { class: "problem" }, `At most ${MAX_RECORDS} records per print.`) : null,
      table(
        parsed.columns.map((c) => ({ title: c, render: (r) => r[c] })),
        parsed.records.slice(0, 5),
        { caption: "The first rows" },
      ),
    );
  });
  const filePanel = h(
    "div",
    { hidden: true },
    field("Data file", file, { help: `First row: variable names (${entered.join(", ") || "none"}). Separator , ; or tab.` }),
    fileInfo,
  );
  const syncMode = () => {
    onePanel.hidden = !modeOne.checked;
    filePanel.hidden = !modeFile.checked;
  };
  modeOne.addEventListener("change", syncMode);
  modeFile.addEventListener("change", syncMode);
  version.addEventListener("change", updatePreview);

  const jobArea = h("div", { class: "job-area" });
  const printForm = form(
    [
      h("div", { class: "row" }, field("Version", version), field("Printer", printer), field("Copies of each label", copies)),
      modes,
      onePanel,
      filePanel,
    ],
    async () => {
      const body = {
        label_id: version.value ? `${id}@${version.value}` : id,
        printer: printer.value,
        copies: Number(copies.value),
        idempotency_key: idempotencyKey,
      };
      if (modeFile.checked) {
        if (!records || !records.length) {
          file.closest(".field").setError("Choose a CSV file with at least one record.");
          file.focus();
          return;
        }
        body.data = records;
      } else {
        if (!(await labelFields.validate())) return;
        body.variables = labelFields.values();
      }
      const accepted = await post("/print", body);
      idempotencyKey = newKey();
      jobPanel?.stop();
      jobPanel = jobView(accepted.job_id);
      replace(
        jobArea,
        section(
          "Print job",
          h("p", `${count(accepted.archive_entry_ids.length, "archive entry", "archive entries")} · accepted as ${accepted.status}.`),
          jobPanel.el,
        ),
      );
      const heading = jobArea.querySelector("h2");
      heading.tabIndex = -1;
      heading.focus(); // and into view: the job's progress is what matters now
    },
    { submitLabel: "Print" },
  );
  add(main, section("Print settings", printForm), jobArea);
  if (!printers.length) showError(jobArea, { title: "No printers", message: "No printer is adopted yet.", code: "" });
  updatePreview();
  return () => jobPanel?.stop();
}
