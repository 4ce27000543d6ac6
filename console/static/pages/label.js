// One label: its preview with the form's variables, its versions with their authors, the visual
// diff of two versions, release and retire, archive and duplicate, and its findings.

import { navigate, ROOT } from "../app.js";
import { get, listAll, patch, post, preview } from "../lib/api.js";
import { add, h, replace } from "../lib/dom.js";
import { ago, author, mm, when } from "../lib/format.js";
import { labelForm } from "../lib/labelform.js";
import { diff, dotsOf, previewImage } from "../lib/raster.js";
import { apiRules } from "../lib/schema.js";
import { can } from "../lib/session.js";
import {
  badge,
  button,
  definitionList,
  dialog,
  errorBox,
  field,
  form,
  input,
  loading,
  notify,
  pageHeader,
  section,
  select,
  showError,
  table,
  tabs,
} from "../lib/ui.js";

function authorCell(a) {
  const agent = a.actor === "service";
  return h(
    "span",
    { class: ["author", agent ? "agent" : "person"] },
    h("span", { class: "author-kind" }, agent ? "Agent" : "Person"),
    " ",
    a.subject,
  );
}

function findingsList(findings) {
  if (!findings || !findings.length) return h("p", { class: "muted" }, "No findings for this version.");
  return h(
    "ul",
    { class: "findings" },
    findings.map((f) =>
      h(
        "li",
        { class: `finding ${f.severity || "info"}` },
        badge(f.severity || "info"),
        " ",
        h("strong", f.code || ""),
        f.path ? h("code", ` ${f.path}`) : null,
        h("div", f.message || ""),
      ),
    ),
  );
}

/** The label a copy was made from: `copied_from` is "lbl_…@version", the label's page has no version. */
function copiedFrom(source) {
  if (!source) return "—";
  const [labelId, version] = source.split("@");
  return h("a", { href: `${ROOT}/labels/${labelId}` }, version ? `${labelId}, version ${version}` : labelId);
}

/** What changed between two documents, by object and variable id. */
export function documentChanges(older, newer) {
  const lines = [];
  const compare = (kind, key, a = [], b = []) => {
    const before = new Map(a.map((item) => [item[key], item]));
    const after = new Map(b.map((item) => [item[key], item]));
    for (const [id, item] of after) {
      if (!before.has(id)) lines.push(["added", `${kind} ${id} added (${item.type || ""})`]);
      else if (JSON.stringify(before.get(id)) !== JSON.stringify(item)) {
        const fields = Object.keys({ ...before.get(id), ...item }).filter(
          (k) => JSON.stringify(before.get(id)[k]) !== JSON.stringify(item[k]),
        );
        lines.push(["changed", `${kind} ${id} changed: ${fields.join(", ")}`]);
      }
    }
    for (const id of before.keys()) if (!after.has(id)) lines.push(["removed", `${kind} ${id} removed`]);
  };
  compare("object", "id", older.objects, newer.objects);
  compare("variable", "name", older.variables, newer.variables);
  for (const key of ["size", "dpi"]) {
    if (JSON.stringify(older[key]) !== JSON.stringify(newer[key])) lines.push(["changed", `${key} changed`]);
  }
  return lines;
}

export async function render(main, { id }) {
  let label = await get(`/labels/${id}`);
  let versions = await listAll(`/labels/${id}/versions`);
  const formAnswer = await get(`/labels/${id}/form`);
  const rules = await apiRules();
  const latestDocument = await get(`/labels/${id}/document`);

  const header = h("div");
  const drawHeader = () => {
    const actions = [];
    if (can("operator") && label.released_version) {
      actions.push(h("a", { class: "button primary", href: `${ROOT}/labels/${id}/print` }, "Print"));
    }
    if (can("designer")) {
      actions.unshift(h("a", { class: "button primary", href: `${ROOT}/labels/${id}/design` }, "Design"));
      actions.push(button("Duplicate", duplicate));
      actions.push(button(label.archived ? "Restore from archive" : "Archive", archive));
    }
    replace(
      header,
      pageHeader(label.name, {
        crumbs: [[`${ROOT}/labels`, "Labels"]],
        actions,
      }),
      h(
        "div",
        { class: "summary" },
        badge(label.status),
        label.archived ? badge("archived") : null,
        h("span", `${mm(label.size)}`),
        h("span", `latest v${label.latest_version}`),
        h("span", label.released_version ? `released v${label.released_version}` : "no released version"),
        h("code", label.id),
      ),
    );
  };
  const refresh = async () => {
    [label, versions] = await Promise.all([get(`/labels/${id}`), listAll(`/labels/${id}/versions`)]);
    drawHeader();
    sections.refresh("versions");
    sections.refresh("compare");
  };

  async function duplicate() {
    const name = rules.constrain(input({ name: "name", value: `${label.name} (copy)`, required: true }), "postLabelDuplicate", "name");
    const { close } = dialog(
      "Duplicate label",
      form([field("Name of the copy", name)], async () => {
        const copy = await post(`/labels/${id}/duplicate`, { name: name.value.trim() });
        close();
        notify(`Created ${copy.name}.`);
        navigate(`${ROOT}/labels/${copy.id}`);
      }, { submitLabel: "Duplicate" }),
    );
  }

  async function archive() {
    const archived = !label.archived;
    label = await post(`/labels/${id}/archive`, { archived });
    notify(archived ? "Label archived." : "Label restored.");
    drawHeader();
  }

  async function setStatus(version, status) {
    const words = {
      approved: ["Approve and release", `Version ${version} becomes the released version: prints of ${id} use it.`],
      retired: ["Retire", `Version ${version} will no longer print.`],
    }[status];
    const comment = rules.constrain(input({ name: "comment", placeholder: "optional" }), "postLabelStatus", "comment");
    return new Promise((resolve) => {
      const { close } = dialog(
        `${words[0]} version ${version}`,
        form(
          [h("p", words[1]), field("Comment", comment)],
          async () => {
            await post(`/labels/${id}/status`, {
              version,
              status,
              comment: comment.value.trim() || undefined,
            });
            close(true);
            notify(status === "approved" ? `Version ${version} is released.` : `Version ${version} is retired.`);
            await refresh();
          },
          { submitLabel: words[0] },
        ),
        { onClose: resolve },
      );
    });
  }

  // --- preview ------------------------------------------------------------------------------
  function renderPreview(panel) {
    const versionSelect = select(
      versions.map((v) => [v.version, `v${v.version} · ${v.status}`]),
      { name: "version", value: String(label.latest_version) },
    );
    const picture = h("div", { class: "preview-box", "aria-live": "polite" });
    const facts = h("p", { class: "muted small" });
    const findings = h("div");
    let controller = null;
    let timer = null;
    const form = labelForm(id, formAnswer.document, latestDocument.document, {
      onInput: () => {
        clearTimeout(timer);
        timer = setTimeout(update, 350);
      },
    });
    async function update() {
      controller?.abort();
      controller = new AbortController();
      try {
        const result = await preview(id, {
          version: Number(versionSelect.value),
          variables: form.values(),
          signal: controller.signal,
        });
        replace(picture, previewImage(result, `Preview of version ${versionSelect.value}`));
        facts.textContent = `${result.width} × ${result.height} dots at ${result.dpi} dpi — exactly what the printer gets.`;
      } catch (error) {
        if (error.name !== "AbortError") replace(picture, errorBox(error));
      }
    }
    async function loadFindings() {
      replace(findings, loading());
      try {
        const answer = await get(`/labels/${id}/document`, { version: versionSelect.value });
        replace(findings, findingsList(answer.findings));
      } catch (error) {
        showError(findings, error);
      }
    }
    versionSelect.addEventListener("change", () => {
      update();
      loadFindings();
    });
    add(panel, 
      h(
        "div",
        { class: "preview-layout" },
        h("div", { class: "preview-form" }, field("Version", versionSelect), h("h3", "Variables"), form.el, button("Update preview", update)),
        h("div", { class: "preview-main" }, picture, facts),
      ),
      section("Findings", findings),
    );
    update();
    loadFindings();
  }

  // --- versions -----------------------------------------------------------------------------
  function renderVersions(panel) {
    add(panel, 
      table(
        [
          { title: "Version", render: (v) => `v${v.version}` },
          { title: "Status", render: (v) => [badge(v.status), v.version === label.released_version ? badge("released") : null] },
          { title: "Author", render: (v) => authorCell(v.author) },
          { title: "Saved", render: (v) => h("time", { datetime: v.created_at, title: when(v.created_at) }, ago(v.created_at)) },
          { title: "Comment", render: (v) => v.comment || "" },
          {
            title: "Status changed",
            // Who changed it, when, and what they said (an approval's comment is kept here).
            render: (v) =>
              v.status_changed_at
                ? [
                    `${v.status_changed_by || ""} · ${ago(v.status_changed_at)}`,
                    v.status_comment ? h("q", { class: "status-comment" }, v.status_comment) : null,
                  ]
                : "",
          },
          {
            title: "Actions",
            render: (v) => {
              const actions = [];
              const other = label.released_version && label.released_version !== v.version ? label.released_version : v.version - 1;
              if (other >= 1) {
                actions.push(
                  button(`Compare with v${other}`, () => {
                    compareChoice = [other, v.version];
                    sections.refresh("compare");
                    sections.select("compare");
                  }),
                );
              }
              if (can("approver") && v.status !== "approved") {
                actions.push(button(`Approve v${v.version}`, () => setStatus(v.version, "approved"), { class: "primary" }));
              }
              if (can("approver") && v.status === "approved") {
                actions.push(button(`Retire v${v.version}`, () => setStatus(v.version, "retired"), { class: "danger" }));
              }
              return h("div", { class: "row-actions" }, actions);
            },
          },
        ],
        versions,
        { caption: "Version history, newest first" },
      ),
    );
  }

  // --- compare ------------------------------------------------------------------------------
  let compareChoice = null;
  function renderCompare(panel) {
    const numbers = versions.map((v) => v.version);
    const newest = numbers[0];
    const defaultOlder =
      label.released_version && label.released_version !== newest ? label.released_version : numbers[1] ?? newest;
    const [olderDefault, newerDefault] = compareChoice || [defaultOlder, newest];
    const options = versions.map((v) => [v.version, `v${v.version} · ${v.status} · ${author(v.author)}`]);
    const older = select(options, { name: "older", value: String(olderDefault) });
    const newer = select(options, { name: "newer", value: String(newerDefault) });
    const result = h("div", { class: "compare-result", "aria-live": "polite" });
    async function compare() {
      replace(result, loading("Rendering both versions…"));
      const [a, b] = [Number(older.value), Number(newer.value)];
      try {
        const [ra, rb, da, db] = await Promise.all([
          preview(id, { version: a }),
          preview(id, { version: b }),
          get(`/labels/${id}/versions/${a}`),
          get(`/labels/${id}/versions/${b}`),
        ]);
        const [dotsA, dotsB] = await Promise.all([dotsOf(ra.blob), dotsOf(rb.blob)]);
        const changes = diff(dotsA, dotsB, `Changed dots from v${a} to v${b}`);
        const lines = documentChanges(da.document, db.document);
        const entryB = versions.find((v) => v.version === b);
        const verdict =
          changes.removed + changes.added === 0
            ? "The two versions print the same dots."
            : `${changes.removed.toLocaleString("en")} dots removed, ${changes.added.toLocaleString("en")} dots added${changes.resized ? "; the size changed" : ""}.`;
        replace(
          result,
          h("p", { class: "diff-summary", role: "status" }, verdict),
          h(
            "div",
            { class: "compare-grid" },
            h("figure", previewImage(ra, `Version ${a}`), h("figcaption", `v${a} — ${author(da.author)}`)),
            h("figure", previewImage(rb, `Version ${b}`), h("figcaption", `v${b} — ${author(db.author)}`)),
            h(
              "figure",
              changes.canvas,
              h(
                "figcaption",
                "Changes: ",
                h("span", { class: "swatch removed" }),
                ` only in v${a} `,
                h("span", { class: "swatch added" }),
                ` only in v${b} `,
                h("span", { class: "swatch same" }),
                " unchanged",
              ),
            ),
          ),
          lines.length
            ? h("ul", { class: "changes", "aria-label": "Document changes" }, lines.map(([kind, text]) => h("li", { class: kind }, text)))
            : h("p", { class: "muted" }, "The documents are the same."),
          can("approver") && entryB && entryB.status !== "approved"
            ? h("div", { class: "actions" }, button(`Approve v${b} and release it`, () => setStatus(b, "approved"), { class: "primary" }))
            : null,
        );
      } catch (error) {
        showError(result, error);
      }
    }
    add(panel, 
      h(
        "div",
        { class: "row" },
        field("Older version", older),
        field("Newer version", newer),
        h("div", { class: "field align-end" }, button("Compare", compare, { class: "primary" })),
      ),
      result,
    );
    if (numbers.length > 1 || compareChoice) compare();
  }

  // --- details ------------------------------------------------------------------------------
  function renderDetails(panel) {
    const name = rules.constrain(input({ name: "name", value: label.name, required: true }), "patchLabel", "name");
    add(panel, 
      definitionList([
        ["Id", h("code", label.id)],
        ["Size", mm(label.size)],
        ["Vorlage", label.vorlage_id || "—"],
        ["Copied from", copiedFrom(label.copied_from)],
        ["Created", when(label.created_at)],
        ["Updated", when(label.updated_at)],
        ["Form", formAnswer.version === 0 ? "derived from the variables" : `authored, v${formAnswer.version}`],
      ]),
      can("designer")
        ? form([field("Name", name)], async () => {
            label = await patch(`/labels/${id}`, { name: name.value.trim() });
            notify("Renamed.");
            drawHeader();
          }, { submitLabel: "Rename" })
        : null,
    );
  }

  drawHeader();
  const sections = tabs(
    [
      { id: "preview", label: "Preview", render: renderPreview },
      { id: "versions", label: `Versions (${versions.length})`, render: renderVersions },
      { id: "compare", label: "Compare versions", render: renderCompare },
      { id: "details", label: "Details", render: renderDetails },
    ],
    { label: "Label sections" },
  );
  add(main, header, sections);
}
