// Administration: users and roles, API tokens (secret shown once), webhooks with their
// deliveries, credentials (a secret's allowed origins), and the approval policies (only a
// person who is an admin may switch them).

import { ROOT } from "../app.js";
import { del, get, listAll, page, post, put } from "../lib/api.js";
import { add, h, replace } from "../lib/dom.js";
import { ago, rfc3339, when } from "../lib/format.js";
import { apiRules } from "../lib/schema.js";
import { can, isHuman, session } from "../lib/session.js";
import {
  badge,
  button,
  checkbox,
  confirmDialog,
  dialog,
  field,
  form,
  input,
  loading,
  notify,
  pageHeader,
  pagedList,
  secretDialog,
  section,
  select,
  showError,
  table,
  tabs,
} from "../lib/ui.js";

// Set by render(): the API's limits and choices (roles, webhook events) for the forms below.
let rules;
const roles = () => rules.choices("createUser", "roles", ["designer", "operator", "approver", "admin"]);

function checkedValues(container) {
  return [...container.querySelectorAll("input:checked")].map((c) => c.value);
}

// --- users --------------------------------------------------------------------------------------
function renderUsers(panel) {
  const list = h("div", loading());
  const load = async () => {
    try {
      const users = await listAll("/users");
      replace(
        list,
        table(
          [
            { title: "User", render: (u) => [h("strong", u.username), u.display_name && u.display_name !== u.username ? ` (${u.display_name})` : ""] },
            {
              title: "Roles",
              render: (u) =>
                h(
                  "div",
                  { class: "row-actions" },
                  u.roles.map((role) =>
                    button(`${role} ×`, async () => {
                      await del(`/users/${u.id}/roles/${role}`);
                      notify(`${u.username} no longer holds ${role}.`);
                      await load();
                    }, { "aria-label": `Remove role ${role} from ${u.username}`, class: "secondary" }),
                  ),
                  addRole(u),
                ),
            },
            { title: "Active", render: (u) => badge(u.active ? "active" : "inactive") },
            { title: "Since", render: (u) => when(u.created_at) },
            {
              title: "",
              render: (u) =>
                h(
                  "div",
                  { class: "row-actions" },
                  button(`Set password`, () => setPassword(u), { "aria-label": `Set the password of ${u.username}` }),
                  u.active
                    ? button("Deactivate", async () => {
                        if (!(await confirmDialog(`Deactivate ${u.username}?`, "Their sessions end at once.", "Deactivate", { danger: true }))) return;
                        await post(`/users/${u.id}/deactivate`);
                        await load();
                      }, { class: "danger", "aria-label": `Deactivate ${u.username}` })
                    : button("Reactivate", async () => {
                        await post(`/users/${u.id}/reactivate`);
                        await load();
                      }, { "aria-label": `Reactivate ${u.username}` }),
                ),
            },
          ],
          users,
        ),
      );
    } catch (error) {
      showError(list, error);
    }
  };
  function addRole(user) {
    const missing = roles().filter((r) => !user.roles.includes(r));
    if (!missing.length) return null;
    const choice = select(missing, { "aria-label": `Role to grant ${user.username}` });
    return h(
      "span",
      { class: "row-actions" },
      choice,
      button("Grant", async () => {
        await post(`/users/${user.id}/roles`, { role: choice.value });
        notify(`${user.username} now holds ${choice.value}.`);
        await load();
      }, { "aria-label": `Grant the role to ${user.username}` }),
    );
  }
  function setPassword(user) {
    const password = rules.constrain(
      input({ name: "password", type: "password", autocomplete: "new-password", required: true }),
      "postUserPassword",
      "password",
    );
    password.minLength = 8; // the API's password rule (not in its schema)
    const { close } = dialog(
      `Set the password of ${user.username}`,
      form([h("p", "All of their sessions end."), field("New password", password)], async () => {
        await post(`/users/${user.id}/password`, { password: password.value });
        close();
        notify("Password set.");
      }, { submitLabel: "Set password" }),
    );
  }
  const username = rules.constrain(input({ name: "username", required: true, autocomplete: "off" }), "createUser", "username", {
    hint: "letters, digits and . _ @ -, starting with a letter or digit",
  });
  const displayName = rules.constrain(input({ name: "display_name" }), "createUser", "display_name");
  const password = rules.constrain(
    input({ name: "password", type: "password", autocomplete: "new-password", required: true }),
    "createUser",
    "password",
  );
  password.minLength = 8; // the API's password rule (not in its schema)
  const roleChoices = h("fieldset", { class: "choices inline" }, h("legend", "Roles"), roles().map((r) => checkbox(r, { value: r, name: "roles" })));
  add(panel, 
    section("Users", list),
    section(
      "New user",
      form(
        [h("div", { class: "row" }, field("Username", username), field("Display name", displayName), field("Password", password)), roleChoices],
        async (el) => {
          const user = await post("/users", {
            username: username.value.trim(),
            display_name: displayName.value.trim() || undefined,
            password: password.value,
            roles: checkedValues(roleChoices),
          });
          el.reset();
          notify(`${user.username} created.`);
          await load();
        },
        { submitLabel: "Create user" },
      ),
    ),
  );
  load();
}

// --- tokens -------------------------------------------------------------------------------------
function renderTokens(panel) {
  const list = h("div");
  const load = () =>
    replace(
      list,
      pagedList(
        (cursor) => page("/auth/tokens", {}, cursor),
        (rows) =>
          table(
            [
              { title: "Agent (subject)", render: (t) => h("strong", t.subject) },
              { title: "Role", render: (t) => t.role },
              { title: "Expires", render: (t) => (t.expires_at ? when(t.expires_at) : "never") },
              { title: "Created", render: (t) => when(t.created_at) },
              { title: "State", render: (t) => (t.revoked_at ? badge("retired", `revoked ${ago(t.revoked_at)}`) : badge("active")) },
              {
                title: "",
                render: (t) =>
                  t.revoked_at
                    ? ""
                    : button("Revoke", async () => {
                        if (!(await confirmDialog(`Revoke the token of ${t.subject}?`, "It stops working at once.", "Revoke", { danger: true }))) return;
                        await del(`/auth/tokens/${t.id}`);
                        load();
                      }, { class: "danger", "aria-label": `Revoke the token of ${t.subject}` }),
              },
            ],
            rows,
            { empty: "No service-account tokens." },
          ),
      ),
    );
  const subject = rules.constrain(input({ name: "subject", required: true, placeholder: "e.g. label-bot" }), "createApiToken", "subject");
  const role = select(rules.choices("createApiToken", "role", roles()), { name: "role" });
  const expires = input({ name: "expires_at", type: "datetime-local" });
  add(panel, 
    section(
      "New token for an agent",
      h("p", { class: "muted" }, "An agent acts with one role. What it authors waits for a person's approval while the policy is on."),
      form(
        [h("div", { class: "row" }, field("Agent name (subject)", subject), field("Role", role), field("Expires", expires, { help: "Empty: never." }))],
        async (el) => {
          const issued = await post("/auth/tokens", { subject: subject.value.trim(), role: role.value, expires_at: rfc3339(expires.value) });
          el.reset();
          secretDialog(`Token for ${issued.subject}`, issued.token);
          load();
        },
        { submitLabel: "Issue token" },
      ),
    ),
    section("Tokens", list),
  );
  load();
}

// --- webhooks -----------------------------------------------------------------------------------
function deliveries(webhook) {
  const body = h("div");
  const el = h("details", h("summary", "Deliveries"), body);
  el.addEventListener("toggle", () => {
    if (!el.open || body.childElementCount) return;
    add(body, 
      pagedList(
        (cursor) => page(`/webhooks/${webhook.id}/deliveries`, {}, cursor),
        (rows) =>
          table(
            [
              { title: "When", render: (d) => when(d.at) },
              { title: "Event", render: (d) => [d.kind, " ", h("code", d.event_id)] },
              { title: "Attempt", render: (d) => String(d.attempt) },
              { title: "Answer", render: (d) => (d.status_code ? String(d.status_code) : d.error || "—") },
              { title: "Outcome", render: (d) => badge(d.outcome) },
              { title: "Took", render: (d) => `${d.duration_ms} ms` },
            ],
            rows,
            { empty: "No deliveries yet." },
          ),
      ),
    );
  });
  return el;
}

function renderWebhooks(panel) {
  const list = h("div", loading());
  const load = async () => {
    try {
      const hooks = await listAll("/webhooks");
      replace(
        list,
        hooks.length
          ? hooks.map((w) =>
              h(
                "div",
                { class: "panel" },
                h("div", { class: "title-row" }, h("code", w.url), button("Delete", async () => {
                  if (!(await confirmDialog("Delete this receiver?", w.url, "Delete", { danger: true }))) return;
                  await del(`/webhooks/${w.id}`);
                  await load();
                }, { class: "danger", "aria-label": `Delete the receiver ${w.url}` })),
                h("p", badge(w.active ? "active" : "inactive"), ` ${w.events.join(", ")}${w.disabled_reason ? ` — disabled: ${w.disabled_reason}` : ""}`),
                deliveries(w),
              ),
            )
          : h("p", { class: "empty" }, "No webhook receivers."),
      );
    } catch (error) {
      showError(list, error);
    }
  };
  const url = rules.constrain(input({ name: "url", type: "url", required: true, placeholder: "https://example.com/hooks/etikett" }), "createWebhook", "url");
  const events = h(
    "fieldset",
    { class: "choices inline" },
    h("legend", "Events"),
    rules
      .choices("createWebhook", "events", ["print.failed", "print.held", "print.sent", "print.confirmed", "label.approved"])
      .map((e) => checkbox(e, { value: e, name: "events" })),
  );
  add(panel, 
    section(
      "New receiver",
      form([field("URL", url, { help: "HTTPS (plain HTTP only to loopback, for development)." }), events], async (el) => {
        const created = await post("/webhooks", { url: url.value.trim(), events: checkedValues(events) });
        el.reset();
        secretDialog("Signing secret", created.secret, "Receivers verify each delivery with this secret (Standard Webhooks). It is shown only now.");
        await load();
      }, { submitLabel: "Add receiver" }),
    ),
    section("Receivers", list),
  );
  load();
}

// --- credentials --------------------------------------------------------------------------------
function renderCredentials(panel) {
  const list = h("div", loading());
  const load = async () => {
    try {
      const items = await listAll("/credentials");
      replace(
        list,
        table(
          [
            { title: "Reference", render: (c) => h("code", c.ref) },
            { title: "Kind", render: (c) => c.kind },
            { title: "Provider / model", render: (c) => (c.provider ? `${c.provider} · ${c.model || ""}` : "") },
            { title: "Endpoint / may go to", render: (c) => c.endpoint || (c.kind === "secret" ? (c.origins || []).join(", ") || "anywhere (no origins)" : "") },
            { title: "Secret", render: (c) => (c.has_secret ? "stored" : "none") },
            { title: "Default", render: (c) => (c.default ? "yes" : "") },
            {
              title: "",
              render: (c) =>
                h(
                  "div",
                  { class: "row-actions" },
                  c.kind === "language-model"
                    ? button("Test", async () => {
                        const result = await post(`/credentials/${encodeURIComponent(c.ref)}/test`, {});
                        notify(result.ok ? `${c.ref} answers (${result.latency_ms} ms).` : `${c.ref} fails: ${result.code || ""} ${result.detail || ""}`, result.ok ? "ok" : "error");
                      }, { "aria-label": `Test ${c.ref}` })
                    : null,
                  button("Delete", async () => {
                    if (!(await confirmDialog(`Delete ${c.ref}?`, "Flows and AI helpers that use it stop working.", "Delete", { danger: true }))) return;
                    await del(`/credentials/${encodeURIComponent(c.ref)}`);
                    await load();
                  }, { class: "danger", "aria-label": `Delete ${c.ref}` }),
                ),
            },
          ],
          items,
          { empty: "No credentials stored." },
        ),
      );
    } catch (error) {
      showError(list, error);
    }
  };
  const limit = (control, name, options) => rules.constrain(control, "createCredential", name, options);
  const ref = limit(input({ name: "ref", required: true, autocomplete: "off" }), "ref", {
    hint: "up to 64 letters, digits and . _ -, starting with a letter or digit",
  });
  const kind = select([["language-model", "Language model"], ["secret", "Secret value"]], { name: "kind" });
  const providerNames = { "anthropic-messages": "Anthropic Messages", "openai-chat": "OpenAI-compatible Chat Completions", "generic-json": "Generic JSON" };
  const provider = select(
    rules.choices("createCredential", "provider", Object.keys(providerNames)).map((p) => [p, providerNames[p] || p]),
    { name: "provider" },
  );
  const model = limit(input({ name: "model" }), "model");
  const endpoint = limit(input({ name: "endpoint", type: "url", placeholder: "https://…" }), "endpoint");
  const apiKey = limit(input({ name: "apiKey", type: "password", autocomplete: "off" }), "apiKey");
  const share = checkbox("Share sample values with the model", { name: "shareSampleValues" });
  const isDefault = checkbox("The default language model", { name: "default" });
  const value = limit(input({ name: "value", type: "password", autocomplete: "off" }), "value");
  const origins = input({ name: "origins", autocomplete: "off", placeholder: "https://host, https://host:8443" });
  const modelFields = h("div", h("div", { class: "row" }, field("Provider", provider), field("Model", model), field("Endpoint", endpoint)), field("API key", apiKey, { help: "Stored encrypted; never shown again." }), share, isDefault);
  const secretFields = h(
    "div",
    { hidden: true },
    field("Value", value, { help: "Stored encrypted; never shown again." }),
    field("Allowed origins", origins, {
      help: "Where flows may send it, separated by spaces or commas (https://host[:port]). Leave empty to allow any (lint warns of such a secret).",
    }),
  );
  // Only the fields of the chosen kind count (and are required).
  const syncKind = () => {
    const secret = kind.value === "secret";
    modelFields.hidden = secret;
    secretFields.hidden = !secret;
    model.required = !secret;
    endpoint.required = !secret;
    value.required = secret;
  };
  kind.addEventListener("change", syncKind);
  const form_ = form(
    [h("div", { class: "row" }, field("Reference", ref), field("Kind", kind)), modelFields, secretFields],
    async (el) => {
      const body = { ref: ref.value.trim(), kind: kind.value };
      if (kind.value === "secret") {
        body.value = value.value;
        const named = origins.value.split(/[\s,]+/).filter(Boolean);
        if (named.length) body.origins = named;
      } else {
        Object.assign(body, {
          provider: provider.value,
          model: model.value.trim(),
          endpoint: endpoint.value.trim(),
          shareSampleValues: share.querySelector("input").checked,
          default: isDefault.querySelector("input").checked,
        });
        if (apiKey.value) body.apiKey = apiKey.value;
      }
      await post("/credentials", body);
      el.reset();
      notify(`${body.ref} stored.`);
      await load();
    },
    { submitLabel: "Store credential" },
  );
  form_.addEventListener("reset", () => window.setTimeout(syncKind));
  syncKind();
  add(panel, section("Credentials", list), section("New credential", form_));
  load();
}

// --- policies -----------------------------------------------------------------------------------
function renderPolicies(panel) {
  const out = h("div", loading());
  const load = async () => {
    try {
      const { items } = await get("/policies");
      replace(
        out,
        items.map((policy) => {
          const toggle = h("input", {
            type: "checkbox",
            role: "switch",
            id: `policy-${policy.name}`,
            checked: policy.enabled,
            disabled: !(isHuman() && can("admin")),
          });
          toggle.addEventListener("change", async () => {
            const enabled = toggle.checked;
            const sure = await confirmDialog(
              `${enabled ? "Switch on" : "Switch off"} ${policy.name}?`,
              enabled
                ? "A person must approve what agents author before it prints or deploys."
                : "Agents' versions can then be approved by agents: nothing waits for a person.",
              enabled ? "Switch on" : "Switch off",
              { danger: !enabled },
            );
            if (!sure) {
              toggle.checked = !enabled;
              return;
            }
            try {
              await put(`/policies/${policy.name}`, { enabled });
              notify(`${policy.name} is ${enabled ? "on" : "off"}.`);
            } catch (error) {
              toggle.checked = !enabled;
              notify(error.message, "error");
            }
            await load();
          });
          return h(
            "div",
            { class: "panel" },
            h("label", { class: "check", for: toggle.id }, toggle, h("strong", policy.name), policy.enabled ? badge("true", "on") : badge("false", "off")),
            h("p", policy.description),
            h("p", { class: "muted small" }, policy.updated_at ? `Changed ${when(policy.updated_at)} by ${policy.updated_by}` : "Never changed: the default."),
            isHuman() && can("admin") ? null : h("p", { class: "muted small" }, "Only an admin signed in as a person may switch it."),
          );
        }),
      );
    } catch (error) {
      showError(out, error);
    }
  };
  add(panel, out);
  load();
}

export async function render(main, { tab }) {
  if (!can("admin")) {
    add(main, pageHeader("Administration"), h("p", { class: "problem", role: "alert" }, "Only admins administer the service."));
    return;
  }
  rules = await apiRules();
  const sections = tabs(
    [
      { id: "users", label: "Users and roles", render: renderUsers },
      { id: "tokens", label: "API tokens", render: renderTokens },
      { id: "webhooks", label: "Webhooks", render: renderWebhooks },
      { id: "credentials", label: "Credentials", render: renderCredentials },
      { id: "policies", label: "Approval policies", render: renderPolicies },
    ],
    {
      initial: tab || "users",
      label: "Administration sections",
      onChange: (id) => window.history.replaceState({}, "", `${ROOT}/admin/${id}`),
    },
  );
  add(main, pageHeader("Administration", { subtitle: `Signed in as ${session.user.subject}.` }), sections);
}
