// The console's shell: signs people in, draws the navigation and routes /console/… paths to pages.

import { ApiError, get, post } from "./lib/api.js";
import { h, replace } from "./lib/dom.js";
import { keepFocus } from "./lib/focus.js";
import { can, session } from "./lib/session.js";
import { announce, errorBox, loading } from "./lib/ui.js";

export const ROOT = "/console";

// path pattern → page module (each exports render(main, params, query) → cleanup?). Exported:
// the browser tests visit every page listed here.
export const ROUTES = [
  ["/signin", "signin.js"],
  ["/account", "account.js"],
  ["/labels", "labels.js"],
  ["/labels/:id", "label.js"],
  ["/labels/:id/print", "print.js"],
  ["/labels/:id/design", "designer.js"],
  ["/jobs/:id", "job.js"],
  ["/flows", "flows.js"],
  ["/flows/:id", "flow.js"],
  ["/flows/:id/edit", "flowedit.js"],
  ["/deployments", "deployments.js"],
  ["/deployments/:id", "deployment.js"],
  ["/runners", "runners.js"],
  ["/runners/:id", "runner.js"],
  ["/printers", "printers.js"],
  ["/archive", "archive.js"],
  ["/audit", "audit.js"],
  ["/admin", "admin.js"],
  ["/admin/:tab", "admin.js"],
  ["/reference", "reference.js"],
];

export const NAV = [
  ["/labels", "Labels", () => true],
  ["/flows", "Flows", () => true],
  ["/deployments", "Deployments", () => true],
  ["/runners", "Runners", () => can("operator", "approver", "designer")],
  ["/printers", "Printers", () => true],
  ["/archive", "Archive", () => can("operator", "approver")],
  ["/audit", "Audit log", () => can("approver")],
  ["/admin", "Administration", () => can("admin")],
  ["/reference", "API reference", () => true],
];

function match(path) {
  const parts = path.replace(/\/+$/, "").split("/").filter(Boolean);
  for (const [pattern, module] of ROUTES) {
    const want = pattern.split("/").filter(Boolean);
    if (want.length !== parts.length) continue;
    const params = {};
    const ok = want.every((segment, i) => {
      if (segment.startsWith(":")) {
        params[segment.slice(1)] = decodeURIComponent(parts[i]);
        return true;
      }
      return segment === parts[i];
    });
    if (ok) return { module, params };
  }
  return null;
}

let cleanup = null;
let renderCount = 0;

export function navigate(href, { replace: replaceState = false } = {}) {
  const target = new URL(href, window.location.origin);
  if (replaceState) window.history.replaceState({}, "", target.pathname + target.search);
  else window.history.pushState({}, "", target.pathname + target.search);
  route();
}

function signOutButton() {
  return h(
    "button",
    {
      type: "button",
      class: "link-button",
      onclick: async () => {
        try {
          await post("/auth/logout");
        } catch {
          /* the session may have ended already */
        }
        session.user = null;
        navigate(`${ROOT}/signin`);
      },
    },
    "Sign out",
  );
}

function shell(current) {
  const user = session.user;
  const nav = h(
    "nav",
    { class: "main-nav", "aria-label": "Main" },
    h(
      "ul",
      NAV.filter(([, , allowed]) => allowed()).map(([path, text]) =>
        h(
          "li",
          h(
            "a",
            {
              href: ROOT + path,
              "aria-current": current.startsWith(ROOT + path) ? "page" : null,
            },
            text,
          ),
        ),
      ),
    ),
  );
  const who = h(
    "div",
    { class: "who" },
    h("a", { href: `${ROOT}/account`, class: "user", title: "Your account" }, user.subject),
    h("span", { class: "roles" }, user.roles.join(", ")),
    signOutButton(),
  );
  return h(
    "div",
    { class: "shell" },
    h(
      "header",
      { class: "top" },
      h("a", { href: `${ROOT}/labels`, class: "brand" }, h("span", { class: "logo", "aria-hidden": "true" }), "Etikett"),
      nav,
      who,
    ),
    h("main", { id: "main", tabindex: "-1" }),
  );
}

async function loadSession() {
  try {
    session.user = await get("/auth/whoami");
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) session.user = null;
    else throw error;
  }
}

async function route() {
  const token = ++renderCount;
  if (cleanup) {
    try {
      cleanup();
    } catch {
      /* a page's cleanup must not stop the next page */
    }
    cleanup = null;
  }
  const app = document.getElementById("app");
  const url = new URL(window.location.href);
  let path = url.pathname;
  if (path === ROOT || path === `${ROOT}/`) path = `${ROOT}/labels`;
  const relative = path.slice(ROOT.length) || "/labels";

  if (session.user === undefined) await loadSession();
  if (!session.user && relative !== "/signin") {
    const next = encodeURIComponent(url.pathname + url.search);
    window.history.replaceState({}, "", `${ROOT}/signin?next=${next}`);
    return route();
  }

  const matched = match(relative);
  let main;
  if (relative === "/signin") {
    main = h("main", { id: "main", tabindex: "-1", class: "signin-main" });
    replace(app, main);
  } else {
    replace(app, shell(path));
    main = document.getElementById("main");
  }
  if (path !== url.pathname) window.history.replaceState({}, "", path + url.search);
  if (!matched) {
    replace(main, h("h1", { tabindex: "-1" }, "Not found"), h("p", "The console has no page at this address."));
    return;
  }
  replace(main, loading());
  try {
    const page = await import(`./pages/${matched.module}`);
    if (token !== renderCount) return;
    replace(main);
    const result = await page.render(main, matched.params, url.searchParams);
    if (token !== renderCount) {
      if (typeof result === "function") result();
      return;
    }
    cleanup = typeof result === "function" ? result : null;
  } catch (error) {
    if (token !== renderCount) return;
    replace(main, h("h1", { tabindex: "-1" }, "This page could not be shown"), errorBox(error));
  }
  const heading = main.querySelector("h1");
  const title = heading ? heading.textContent : "Etikett";
  document.title = `${title} · Etikett`;
  if (!main.contains(document.activeElement)) heading?.focus({ preventScroll: true });
  announce(title);
}

function onClick(event) {
  if (event.defaultPrevented || event.button !== 0) return;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const anchor = event.target.closest("a[href]");
  if (!anchor || anchor.target || anchor.hasAttribute("download")) return;
  const target = new URL(anchor.href, window.location.href);
  if (target.origin !== window.location.origin || !target.pathname.startsWith(ROOT)) return;
  event.preventDefault();
  navigate(target.pathname + target.search);
}

export function start() {
  session.user = undefined;
  keepFocus();
  document.addEventListener("click", onClick);
  window.addEventListener("popstate", () => route());
  window.addEventListener("etikett:unauthenticated", () => {
    if (session.user && !window.location.pathname.startsWith(`${ROOT}/signin`)) {
      session.user = null;
      route();
    }
  });
  route();
}

/** After signing in: who it is, then where the person wanted to go. */
export async function signedInTo(next) {
  await loadSession();
  const safe = next && next.startsWith(`${ROOT}/`) && !next.startsWith(`${ROOT}/signin`) ? next : `${ROOT}/labels`;
  navigate(safe, { replace: true });
}

start();
