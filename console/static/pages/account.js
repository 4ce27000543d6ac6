// Your own account: who you are to the service, and your password.

import { post } from "../lib/api.js";
import { h } from "../lib/dom.js";
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
  const current = input({ name: "current_password", type: "password", autocomplete: "current-password", required: true });
  const next = input({ name: "new_password", type: "password", autocomplete: "new-password", required: true, minlength: 8 });
  const repeat = input({ name: "repeat", type: "password", autocomplete: "new-password", required: true });
  main.appendChild(
    section(
      "Change your password",
      h("p", { class: "muted" }, "Your other sessions end; this one stays signed in."),
      form(
        [field("Current password", current), field("New password", next, { help: "8 to 1024 characters." }), field("Repeat the new password", repeat)],
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
