// Two lists beside the canvas: the objects in drawing order (the canvas's accessible twin: what
// a keyboard or a screen reader selects by) and the preflight findings of the current layout
// (each selects its object). Both follow the selection.

import { h, replace } from "../lib/dom.js";
import { badge } from "../lib/ui.js";
import { icon } from "./palette.js";

const KIND_ICONS = { text: "text", box: "box", line: "line", ellipse: "ellipse", image: "image" };

function describe(obj, item, titles) {
  if (obj.type === "barcode") return `${titles[obj.symbology] || obj.symbology}${item?.text ? `: ${item.text}` : ""}`;
  if (obj.type === "text") return item?.text ?? obj.content ?? obj.expression ?? "";
  return obj.type;
}

/** The objects, topmost first, as an accessible listbox with multiple selection. */
export class ObjectList {
  constructor({ onSelect, onActivate, titles }) {
    this.onSelect = onSelect;
    this.onActivate = onActivate;
    this.titles = titles;
    this.list = h("ul", { class: "dz-objects", role: "listbox", "aria-multiselectable": "true", "aria-label": "Objects on the label", tabindex: "0" });
    this.list.addEventListener("keydown", (event) => this.onKey(event));
    // One handler on the listbox (the focusable element) for every option.
    this.list.addEventListener("click", (event) => {
      const option = event.target.closest("[role=option]");
      if (option) this.choose(option.dataset.id, event.shiftKey || event.ctrlKey || event.metaKey);
    });
    this.element = h("section", { class: "dz-list-panel", "aria-label": "Objects" }, h("h2", { class: "dz-panel-title" }, "Objects"), this.list);
    this.ids = [];
    this.active = null;
  }

  render(document, layout, selection, findings) {
    const worst = new Map();
    for (const finding of findings || []) {
      if (finding.object_id && worst.get(finding.object_id) !== "error") worst.set(finding.object_id, finding.severity);
    }
    const objects = [...document.objects].reverse();
    this.ids = objects.map((obj) => obj.id);
    if (!this.ids.includes(this.active)) this.active = [...selection][0] || this.ids[0] || null;
    // Drawn again only when what it shows changed (a drag changes none of it).
    const key = JSON.stringify([
      objects.map((obj) => [obj.id, obj.type, obj.symbology, layout?.byId.get(obj.id)?.text ?? obj.content ?? obj.expression, worst.get(obj.id)]),
      [...selection],
      this.active,
    ]);
    if (key === this.shown) return;
    this.shown = key;
    replace(
      this.list,
      objects.map((obj) => {
        const item = layout?.byId.get(obj.id);
        const severity = worst.get(obj.id);
        const selected = selection.has(obj.id);
        const option = h(
          "li",
          {
            role: "option",
            id: `dz-object-${obj.id}`,
            "aria-selected": String(selected),
            class: ["dz-object", selected && "selected", obj.id === this.active && "active"],
            "data-id": obj.id,
          },
          icon(obj.type === "barcode" ? "linear" : KIND_ICONS[obj.type] || "box"),
          h("span", { class: "dz-object-id" }, obj.id),
          h("span", { class: "dz-object-what" }, describe(obj, item, this.titles)),
          severity ? badge(severity, severity === "error" ? "error" : "warning") : null,
        );
        return option;
      }),
    );
    if (this.active) this.list.setAttribute("aria-activedescendant", `dz-object-${this.active}`);
    else this.list.removeAttribute("aria-activedescendant");
  }

  choose(id, additive) {
    this.active = id;
    this.onSelect(id, additive);
  }

  onKey(event) {
    if (!this.ids.length) return;
    const at = Math.max(0, this.ids.indexOf(this.active));
    const moves = { ArrowDown: 1, ArrowUp: -1, Home: -at, End: this.ids.length - 1 - at };
    if (event.key in moves) {
      event.preventDefault();
      event.stopPropagation();
      const next = this.ids[Math.min(this.ids.length - 1, Math.max(0, at + moves[event.key]))];
      this.choose(next, event.shiftKey);
    } else if (event.key === " ") {
      event.preventDefault();
      event.stopPropagation();
      if (this.active) this.choose(this.active, true);
    } else if (event.key === "Enter") {
      event.preventDefault();
      event.stopPropagation();
      if (this.active) this.onActivate(this.active);
    }
  }
}

/** The findings of the current layout, errors first; each names and selects its object. */
export class FindingList {
  constructor({ onSelect }) {
    this.onSelect = onSelect;
    this.summary = h("p", { class: "dz-findings-summary", role: "status" });
    this.list = h("ul", { class: "dz-findings", "aria-label": "Findings" });
    this.element = h("section", { class: "dz-list-panel", "aria-label": "Findings" }, h("h2", { class: "dz-panel-title" }, "Findings"), this.summary, this.list);
  }

  render(findings) {
    const errors = findings.filter((f) => f.severity === "error").length;
    const warnings = findings.length - errors;
    this.summary.textContent = findings.length
      ? `${errors} error${errors === 1 ? "" : "s"}, ${warnings} warning${warnings === 1 ? "" : "s"} — editing goes on; errors block approval and printing.`
      : "No findings: this layout prints as designed.";
    this.summary.className = `dz-findings-summary ${errors ? "bad" : warnings ? "warn" : "ok"}`;
    replace(
      this.list,
      findings.map((finding) =>
        h(
          "li",
          { class: ["dz-finding", `sev-${finding.severity}`] },
          badge(finding.severity),
          " ",
          finding.object_id
            ? h("button", { type: "button", class: "link", onclick: () => this.onSelect(finding.object_id) }, finding.object_id)
            : h("code", finding.path || ""),
          h("span", { class: "dz-finding-code" }, finding.code),
          h("p", finding.message),
        ),
      ),
    );
  }
}
