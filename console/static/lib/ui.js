// The console's building blocks: fields, buttons, tables, dialogs, tabs, messages.

import { h, nextId, replace } from "./dom.js";
import { restoreFocus, trailOf } from "./focus.js";

export function announce(text) {
  const region = document.getElementById("announcer");
  if (!region) return;
  region.textContent = "";
  window.setTimeout(() => {
    region.textContent = text;
  }, 30);
}

/** A short message at the corner of the screen, also read out. */
export function notify(text, kind = "ok") {
  let stack = document.getElementById("toasts");
  if (!stack) {
    stack = h("div", { id: "toasts", class: "toasts", role: "status", "aria-live": "polite" });
    document.body.appendChild(stack);
  }
  const toast = h("div", { class: ["toast", kind] }, text);
  stack.appendChild(toast);
  window.setTimeout(() => toast.remove(), kind === "error" ? 9000 : 5000);
}

/** A problem as a person reads it: title, detail, each field, and the stable code. */
export function errorBox(error) {
  const params = (error && error.params) || {};
  const items = [];
  for (const item of params.fields || []) {
    items.push(`${String(item.field).replace(/^body\./, "")}: ${item.message}`);
  }
  for (const item of params.errors || []) {
    const where = [
      item.record !== undefined && item.record !== null ? `record ${item.record + 1}` : null,
      item.variable || item.path || item.field,
    ]
      .filter(Boolean)
      .join(", ");
    items.push(where ? `${where}: ${item.message}` : item.message);
  }
  return h(
    "div",
    { class: "problem", role: "alert" },
    h("strong", error.title || "Something went wrong"),
    h("p", error.message || ""),
    items.length ? h("ul", items.slice(0, 20).map((text) => h("li", text))) : null,
    error.code ? h("p", { class: "code" }, `Code: ${error.code}`) : null,
  );
}

export function showError(container, error) {
  replace(container, errorBox(error));
  return container;
}

/** A labelled control; `control` is an input, select or textarea (gets an id if it has none). */
export function field(label, control, { help, hint, className } = {}) {
  if (!control.id) control.id = nextId("f");
  const helpId = help ? nextId("help") : null;
  if (helpId) control.setAttribute("aria-describedby", helpId);
  const error = h("span", { class: "field-error", id: nextId("err") });
  control.addEventListener("input", () => {
    control.removeAttribute("aria-invalid");
    error.textContent = "";
  });
  const wrapper = h(
    "div",
    { class: ["field", className] },
    h("label", { for: control.id }, label, hint ? h("span", { class: "hint" }, ` ${hint}`) : null),
    control,
    help ? h("span", { class: "help", id: helpId }, help) : null,
    error,
  );
  wrapper.setError = (message) => {
    error.textContent = message || "";
    if (message) {
      control.setAttribute("aria-invalid", "true");
      control.setAttribute(
        "aria-describedby",
        [helpId, error.id].filter(Boolean).join(" "),
      );
    } else {
      control.removeAttribute("aria-invalid");
    }
  };
  wrapper.control = control;
  return wrapper;
}

export function input(attrs = {}) {
  return h("input", { type: "text", ...attrs });
}

export function select(options, attrs = {}) {
  return h(
    "select",
    attrs,
    options.map((option) => {
      const [value, text] = Array.isArray(option) ? option : [option, option];
      return h("option", { value, selected: String(attrs.value ?? "") === String(value) }, text);
    }),
  );
}

export function checkbox(label, attrs = {}) {
  const box = h("input", { type: "checkbox", id: nextId("c"), ...attrs });
  return h("label", { class: "check", for: box.id }, box, " ", label);
}

/** A button that shows it is working while `action()` runs and reports a failure. */
export function button(text, action, attrs = {}) {
  const el = h("button", { type: "button", ...attrs }, text);
  if (action) {
    el.addEventListener("click", async (event) => {
      // Busy, not disabled: a disabled button would drop the keyboard focus.
      if (el.getAttribute("aria-busy") === "true") return;
      el.setAttribute("aria-busy", "true");
      el.setAttribute("aria-disabled", "true");
      try {
        await action(event);
      } catch (error) {
        if (error && error.name !== "AbortError") notify(error.message || String(error), "error");
      } finally {
        el.removeAttribute("aria-busy");
        el.removeAttribute("aria-disabled");
      }
    });
  }
  return el;
}

/** A form whose submit runs `onSubmit(values, form)`; errors appear above its buttons. */
export function form(children, onSubmit, { submitLabel = "Save", extraActions = [], className } = {}) {
  const message = h("div", { class: "form-message" });
  const submit = h("button", { type: "submit", class: "primary" }, submitLabel);
  const el = h(
    "form",
    { class: ["form", className], novalidate: true },
    children,
    message,
    h("div", { class: "actions" }, submit, extraActions),
  );
  el.addEventListener("submit", async (event) => {
    event.preventDefault();
    if (submit.getAttribute("aria-busy") === "true") return;
    replace(message);
    for (const wrapper of el.querySelectorAll(".field")) wrapper.setError?.("");
    for (const control of el.elements) control.checkPattern?.();
    if (!el.checkValidity()) {
      const invalid = el.querySelector(":invalid");
      for (const control of el.querySelectorAll(":invalid")) {
        control.closest(".field")?.setError?.(control.validationMessage);
      }
      invalid?.focus();
      return;
    }
    submit.setAttribute("aria-busy", "true");
    submit.setAttribute("aria-disabled", "true");
    try {
      await onSubmit(el);
    } catch (error) {
      if (error && error.name === "AbortError") return;
      showError(message, error);
      markFields(el, error);
    } finally {
      submit.removeAttribute("aria-busy");
      submit.removeAttribute("aria-disabled");
    }
  });
  el.message = message;
  return el;
}

/** Puts the messages of a problem's params.fields next to the fields of the same name. */
export function markFields(formEl, error) {
  const params = (error && error.params) || {};
  for (const item of params.fields || []) {
    const name = String(item.field).split(".").pop();
    const control = formEl.querySelector(`[name="${CSS.escape(name)}"]`);
    control?.closest(".field")?.setError?.(item.message);
  }
}

export function badge(status, text) {
  const value = String(status ?? "none");
  return h("span", { class: ["badge", `s-${value.replace(/[^a-z_]/gi, "")}`] }, text ?? value.replace(/_/g, " "));
}

/** Where a print was made on site while the service was away: "printed offline", when, and the
 * sync's flag (say `deployment_not_approved`); nothing for a print the service made. */
export function offlineMark(record) {
  if (!record.printed_offline) return "";
  return h(
    "span",
    { class: "offline-mark" },
    " ",
    badge("held", "printed offline"),
    record.flag ? [" ", badge("warning", record.flag.replace(/_/g, " "))] : "",
  );
}

/** A data table; `columns` are {title, render(row) → node|string, className}. */
export function table(columns, rows, { caption, empty = "Nothing here yet.", rowAttrs } = {}) {
  if (!rows.length) return h("p", { class: "empty" }, empty);
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      caption ? h("caption", caption) : null,
      h(
        "thead",
        h(
          "tr",
          columns.map((c) =>
            h("th", { scope: "col", class: c.className }, c.title || h("span", { class: "visually-hidden" }, "Actions")),
          ),
        ),
      ),
      h(
        "tbody",
        rows.map((row) =>
          h(
            "tr",
            rowAttrs ? rowAttrs(row) : null,
            columns.map((c) => h("td", { class: c.className }, c.render(row))),
          ),
        ),
      ),
    ),
  );
}

export function link(href, text, attrs = {}) {
  return h("a", { href, ...attrs }, text);
}

export function pageHeader(title, { subtitle, actions = [], crumbs = [] } = {}) {
  return h(
    "header",
    { class: "page-header" },
    crumbs.length
      ? h(
          "nav",
          { class: "crumbs", "aria-label": "Breadcrumb" },
          h("ol", crumbs.map(([href, text]) => h("li", link(href, text)))),
        )
      : null,
    h("div", { class: "title-row" }, h("h1", { tabindex: "-1" }, title), h("div", { class: "actions" }, actions)),
    subtitle ? h("p", { class: "subtitle" }, subtitle) : null,
  );
}

export function section(title, ...children) {
  const id = nextId("sec");
  return h(
    "section",
    { class: "panel", "aria-labelledby": id },
    h("h2", { id }, title),
    children,
  );
}

export function loading(text = "Loading…") {
  return h("p", { class: "loading", role: "status" }, text);
}

/**
 * A modal dialog (focus stays inside until it closes). Esc closes it; focus returns to where it
 * was, or to that place redrawn if the opener is gone by then. Answers {el, close}.
 */
export function dialog(title, body, { actions = [], onClose, wide = false } = {}) {
  const titleId = nextId("dlg");
  const opener = document.activeElement;
  const openerTrail = trailOf(opener);
  const closeButton = h("button", { type: "button", class: "icon", "aria-label": "Close" }, "×");
  const el = h(
    "dialog",
    { class: ["dialog", wide && "wide"], "aria-labelledby": titleId },
    h("div", { class: "dialog-head" }, h("h2", { id: titleId }, title), closeButton),
    h("div", { class: "dialog-body" }, body),
    actions.length ? h("div", { class: "actions" }, actions) : null,
  );
  const close = (value) => {
    if (el.open) el.close();
    el.remove();
    if (opener && opener.isConnected) opener.focus();
    else if (opener && opener !== document.body) restoreFocus(opener, openerTrail);
    onClose?.(value);
  };
  closeButton.addEventListener("click", () => close(undefined));
  el.addEventListener("cancel", (event) => {
    event.preventDefault();
    close(undefined);
  });
  document.body.appendChild(el);
  el.showModal();
  const first = el.querySelector(".dialog-body input, .dialog-body select, .dialog-body textarea");
  (first || el.querySelector(".actions button") || closeButton).focus();
  return { el, close };
}

export function confirmDialog(title, text, confirmLabel = "Confirm", { danger = false } = {}) {
  return new Promise((resolve) => {
    let done = false;
    const finish = (value) => {
      if (done) return;
      done = true;
      resolve(value);
    };
    const yes = h("button", { type: "button", class: danger ? "danger" : "primary" }, confirmLabel);
    const no = h("button", { type: "button" }, "Cancel");
    const { close } = dialog(title, h("p", text), {
      actions: [yes, no],
      onClose: () => finish(false),
    });
    yes.addEventListener("click", () => {
      finish(true);
      close(true);
    });
    no.addEventListener("click", () => close(false));
    yes.focus();
  });
}

/** A secret that is shown exactly once (tokens, webhook secrets). */
export function secretDialog(title, secret, note) {
  const value = h("input", {
    type: "text",
    readonly: true,
    value: secret,
    class: "secret",
    "aria-label": "Secret",
  });
  const copy = button("Copy", async () => {
    await navigator.clipboard?.writeText(secret);
    notify("Copied to the clipboard.");
  });
  const okay = h("button", { type: "button", class: "primary" }, "I have stored it");
  const { close } = dialog(
    title,
    [
      h("p", { class: "warning" }, note || "This secret is shown only now. Store it before you close this dialog."),
      h("div", { class: "secret-row" }, value, copy),
    ],
    { actions: [okay] },
  );
  okay.addEventListener("click", () => close());
  value.select();
}

/** Accessible tabs: arrow keys move between tabs; each panel renders on first view. */
export function tabs(items, { initial, onChange, label = "Sections" } = {}) {
  const list = h("div", { role: "tablist", "aria-label": label, class: "tabs" });
  const panels = h("div", { class: "tab-panels" });
  const entries = items.map((item) => {
    const tabId = nextId("tab");
    const panelId = nextId("panel");
    const tab = h(
      "button",
      { type: "button", role: "tab", id: tabId, "aria-controls": panelId, "aria-selected": "false", tabindex: "-1" },
      item.label,
    );
    const panel = h("div", { role: "tabpanel", id: panelId, "aria-labelledby": tabId, hidden: true, tabindex: "0" });
    list.appendChild(tab);
    panels.appendChild(panel);
    return { item, tab, panel, rendered: false };
  });
  const choose = (entry, focus = false) => {
    for (const other of entries) {
      const active = other === entry;
      other.tab.setAttribute("aria-selected", String(active));
      other.tab.tabIndex = active ? 0 : -1;
      other.panel.hidden = !active;
    }
    if (!entry.rendered) {
      entry.rendered = true;
      entry.item.render(entry.panel);
    }
    if (focus) entry.tab.focus();
    onChange?.(entry.item.id);
  };
  entries.forEach((entry, index) => {
    entry.tab.addEventListener("click", () => choose(entry));
    entry.tab.addEventListener("keydown", (event) => {
      const moves = { ArrowRight: 1, ArrowLeft: -1, Home: -index, End: entries.length - 1 - index };
      if (!(event.key in moves)) return;
      event.preventDefault();
      const next = (index + moves[event.key] + entries.length) % entries.length;
      choose(entries[next], true);
    });
  });
  choose(entries.find((e) => e.item.id === initial) || entries[0]);
  const el = h("div", { class: "tabs-wrap" }, list, panels);
  el.select = (id) => choose(entries.find((e) => e.item.id === id));
  el.refresh = (id) => {
    const entry = entries.find((e) => e.item.id === id);
    if (!entry) return;
    entry.rendered = false;
    replace(entry.panel);
    if (!entry.panel.hidden) choose(entry);
  };
  return el;
}

/** A list that loads page after page on request ("Load more"). */
export function pagedList(loadPage, renderRows, { empty } = {}) {
  const body = h("div");
  const more = button("Load more", () => next(), { class: "secondary" });
  const footer = h("div", { class: "pager" });
  const el = h("div", { class: "paged" }, body, footer);
  let cursor = null;
  const rows = [];
  async function next() {
    const page = await loadPage(cursor);
    rows.push(...page.items);
    cursor = page.next_cursor;
    replace(body, renderRows(rows, { empty }));
    replace(footer, cursor ? more : null);
  }
  el.reload = async () => {
    rows.length = 0;
    cursor = null;
    replace(body, loading());
    try {
      await next();
    } catch (error) {
      showError(body, error);
    }
  };
  el.rows = rows;
  el.reload();
  return el;
}

export function definitionList(pairs) {
  return h(
    "dl",
    { class: "facts" },
    pairs.filter(Boolean).map(([term, value]) => [h("dt", term), h("dd", value ?? "—")]),
  );
}

export function pre(value) {
  return h("pre", { class: "json" }, typeof value === "string" ? value : JSON.stringify(value, null, 2));
}
