// Sign in, or create the first admin while the service has no user yet.

import { signedInTo } from "../app.js";
import { get, post } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { apiRules } from "../lib/schema.js";
import { field, form, input } from "../lib/ui.js";

export async function render(main, _params, query) {
  const [{ setup_required: setupRequired, setup_secret_required: secretRequired }, rules] = await Promise.all([
    get("/auth/setup"),
    apiRules(),
  ]);
  const next = query.get("next");
  // The first admin is a user like any other: the API holds setup to the username rule of users.
  const [operation, hint] = setupRequired
    ? ["postAuthSetup", { hint: "letters, digits and . _ @ -, starting with a letter or digit" }]
    : ["login", {}];
  const username = rules.constrain(input({ name: "username", autocomplete: "username", required: true }), operation, "username", hint);
  const password = rules.constrain(
    input({
      name: "password",
      type: "password",
      autocomplete: setupRequired ? "new-password" : "current-password",
      required: true,
    }),
    operation,
    "password",
  );
  if (setupRequired) password.minLength = 8; // the API's password rule (not in its schema)
  const fields = [field("Username", username), field("Password", password)];
  let repeat = null;
  let secret = null;
  if (setupRequired) {
    repeat = input({ name: "repeat", type: "password", autocomplete: "new-password", required: true });
    fields.push(field("Repeat the password", repeat));
    if (secretRequired) {
      // A deployed stack: only who knows its SetupSecret parameter creates the first admin.
      secret = input({ name: "setup_secret", type: "password", autocomplete: "off", required: true });
      fields.push(field("Setup secret (the stack's SetupSecret)", secret));
    }
  }
  const card = h(
    "div",
    { class: "signin-card" },
    h("div", { class: "brand big" }, h("span", { class: "logo", "aria-hidden": "true" }), "Etikett"),
    h("h1", { tabindex: "-1" }, setupRequired ? "First setup" : "Sign in"),
    setupRequired
      ? h("p", "No one has an account yet. Create the first administrator; you are signed in afterwards.")
      : null,
    form(
      fields,
      async (el) => {
        if (repeat && repeat.value !== password.value) {
          repeat.closest(".field").setError("The passwords differ.");
          repeat.focus();
          return;
        }
        const body = { username: username.value.trim(), password: password.value };
        if (secret) body.setup_secret = secret.value;
        try {
          await post(setupRequired ? "/auth/setup" : "/auth/login", body);
        } catch (error) {
          if (error.code === "auth.login_throttled" && error.retryAfter) {
            error.message = `${error.message} Try again in ${error.retryAfter} s.`;
          }
          password.value = "";
          throw error;
        }
        el.reset();
        await signedInTo(next);
      },
      { submitLabel: setupRequired ? "Create administrator" : "Sign in" },
    ),
  );
  main.appendChild(card);
  username.focus();
}
