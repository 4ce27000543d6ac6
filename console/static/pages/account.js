// Your own account: who you are to the service, and your password.

import { post } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { apiRules } from "../lib/schema.js";
import { session } from "../lib/session.js";
import { definitionList, field, form, input, notify, pageHeader, section } from "../lib/ui.js";

export async function render(main) {
  const user = session.user;
  main.appendChild(pageHeader("Your account"));
  main.appendChild(
    section(
      "Signed in as",
      definitionList([
        ["Username", user.subject],
        ["Kind", user.actor === "human" ? "person (session)" : "agent (service token)"],
        ["Roles", user.roles.join(", ") || "none"],
        ["User id", user.user_id],
      ]),
    ),
  );
  if (user.actor !== "human") return;
  const rules = await apiRules();
  // For password managers: whose password this is (they look for a username in the form).
  const who = input({ name: "username", autocomplete: "username", readonly: true, hidden: true });
  who.defaultValue = user.subject; // kept by the form's reset
  const current = rules.constrain(
    input({ name: "current_password", type: "password", autocomplete: "current-password", required: true }),
    "postAuthPassword",
    "current_password",
  );
  const next = rules.constrain(
    input({ name: "new_password", type: "password", autocomplete: "new-password", required: true }),
    "postAuthPassword",
    "new_password",
  );
  next.minLength = 8; // the API's password rule (not in its schema)
  const repeat = input({ name: "repeat", type: "password", autocomplete: "new-password", required: true });
  main.appendChild(
    section(
      "Change your password",
      h("p", { class: "muted" }, "Your other sessions end; this one stays signed in."),
      form(
        [
          who,
          field("Current password", current),
          field("New password", next, { help: next.maxLength > 0 ? `${next.minLength} to ${next.maxLength} characters.` : null }),
          field("Repeat the new password", repeat),
        ],
        async (el) => {
          if (repeat.value !== next.value) {
            repeat.closest(".field").setError("The passwords differ.");
            return;
          }
          await post("/auth/password", { current_password: current.value, new_password: next.value });
          el.reset();
          notify("Your password is changed.");
        },
        { submitLabel: "Change password" },
      ),
    ),
  );
}
