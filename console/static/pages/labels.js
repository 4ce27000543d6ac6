// Labels: thumbnails, search and filters, a new label (designer/start.js: from a Vorlage, a preset,
// a size, an imported file or a copy), which opens in the designer, and new labels imported from
// a ZPL or gLabels file (with how exactly each came through).

import { ROOT } from "../app.js";
import { newLabelDialog } from "../designer/start.js";
import { listAll, preview, upload } from "../lib/api.js";
import { add, h, replace } from "../lib/dom.js";
import { ago, mm } from "../lib/format.js";
import { importResult } from "../lib/importview.js";
import { previewImage } from "../lib/raster.js";
import { can } from "../lib/session.js";
import { badge, button, dialog, field, form, input, loading, pageHeader, select, showError } from "../lib/ui.js";

const STATUS_FILTERS = [
  ["", "Any status"],
  ["released", "Released"],
  ["draft", "Never released"],
  ["pending", "Changes awaiting release"],
];
const ARCHIVE_FILTERS = [
  ["false", "Active labels"],
  ["true", "Archived labels"],
  ["", "Active and archived"],
];

/** Loads thumbnails as they scroll into view, a few at a time. */
function thumbnails() {
  const queue = [];
  let running = 0;
  const pump = () => {
    while (running < 3 && queue.length) {
      const [slot, label] = queue.shift();
      running += 1;
      preview(label.id)
        .then((result) => replace(slot, previewImage(result, `Preview of ${label.name}`)))
        .catch(() => replace(slot, h("span", { class: "thumb-missing" }, "No preview")))
        .finally(() => {
          running -= 1;
          pump();
        });
    }
  };
  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        queue.push([entry.target, entry.target.label]);
      }
      pump();
    },
    { rootMargin: "200px" },
  );
  return {
    watch(slot, label) {
      slot.label = label;
      observer.observe(slot);
    },
    stop() {
      observer.disconnect();
      queue.length = 0;
    },
  };
}

function matches(label, text, status) {
  const needle = text.trim().toLowerCase();
  if (needle && !label.name.toLowerCase().includes(needle) && !label.id.toLowerCase().includes(needle)) return false;
  if (status === "released") return label.status === "released";
  if (status === "draft") return label.status === "draft";
  if (status === "pending") return label.latest_version > (label.released_version || 0);
  return true;
}

function card(label, thumbs) {
  const slot = h("div", { class: "thumb" }, h("span", { class: "thumb-missing" }, "…"));
  thumbs.watch(slot, label);
  const pending = label.latest_version > (label.released_version || 0);
  return h(
    "li",
    { class: "label-card" },
    slot,
    h(
      "div",
      { class: "card-text" },
      h("a", { href: `${ROOT}/labels/${label.id}`, class: "card-title" }, label.name),
      h(
        "div",
        { class: "card-meta" },
        badge(label.status),
        label.archived ? badge("archived") : null,
        pending && label.released_version ? badge("pending", `v${label.latest_version} awaiting release`) : null,
      ),
      h(
        "div",
        { class: "muted small" },
        `${mm(label.size)} · v${label.latest_version}${label.released_version ? ` (released v${label.released_version})` : ""} · ${ago(label.updated_at)}`,
      ),
    ),
  );
}

export async function render(main, _params, query) {
  const thumbs = thumbnails();
  const search = input({ type: "search", name: "q", value: query.get("q") || "", placeholder: "Name or id" });
  const status = select(STATUS_FILTERS, { name: "status", value: query.get("status") || "" });
  const archived = select(ARCHIVE_FILTERS, { name: "archived", value: query.get("archived") ?? "false" });
  const count = h("p", { class: "muted", role: "status" });
  const list = h("ul", { class: "label-grid", "aria-label": "Labels" });
  const body = h("div", loading());
  let labels = [];

  const draw = () => {
    const shown = labels.filter((label) => matches(label, search.value, status.value));
    count.textContent = `${shown.length} of ${labels.length} labels`;
    replace(list, shown.map((label) => card(label, thumbs)));
    replace(body, shown.length ? list : h("p", { class: "empty" }, labels.length ? "No label matches the filters." : "No labels yet."));
    const params = new URLSearchParams();
    if (search.value) params.set("q", search.value);
    if (status.value) params.set("status", status.value);
    if (archived.value !== "false") params.set("archived", archived.value);
    const qs = params.toString();
    window.history.replaceState({}, "", `${ROOT}/labels${qs ? `?${qs}` : ""}`);
  };
  const load = async () => {
    replace(body, loading());
    try {
      labels = await listAll("/labels", { archived: archived.value || undefined }, 2000);
      draw();
    } catch (error) {
      showError(body, error);
    }
  };
  search.addEventListener("input", draw);
  status.addEventListener("change", draw);
  archived.addEventListener("change", load);

  add(main, 
    pageHeader("Labels", {
      actions: can("designer")
        ? [button("Import file", () => importDialog(load)), button("New label", () => newLabelDialog(), { class: "primary" })]
        : [],
    }),
    h(
      "div",
      { class: "filters", role: "search", "aria-label": "Filter labels" },
      field("Search", search),
      field("Status", status),
      field("Shown", archived),
    ),
    count,
    body,
  );
  await load();
  return () => thumbs.stop();
}

/** Upload a ZPL or gLabels file; the dialog then shows what was created and how exactly. */
function importDialog(reload) {
  const file = input({ type: "file", name: "file", required: true, accept: ".zpl,.prn,.txt,.glabels,.xml,.gz" });
  const dpi = select([["203", "203 dpi"], ["300", "300 dpi"], ["600", "600 dpi"]], { name: "dpi" });
  let imported = false;
  let close = () => {};
  const body = h(
    "div",
    form(
      [
        field("File", file, { help: "A ZPL format (^XA…^XZ) or a gLabels 3 or 4 document. Each label in it becomes a new draft." }),
        field("Density of the file's dots", dpi, { help: "ZPL positions are printer dots; gLabels documents get this density." }),
      ],
      async () => {
        const answer = await upload("/import", file.files[0], { query: { dpi: dpi.value } });
        imported = true;
        const done = button("Done", () => close(), { class: "primary" });
        replace(body, importResult(answer), h("div", { class: "actions" }, done));
        done.focus();
      },
      { submitLabel: "Import" },
    ),
  );
  ({ close } = dialog("Import a label file", body, {
    wide: true,
    onClose: () => {
      if (imported) reload();
    },
  }));
}
