// The API reference: the service's own OpenAPI document (/api/v1/openapi.json), read with the
// vendored Swagger UI, on this origin and within the console's Content-Security-Policy.

import { BASE, CSRF_HEADER } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { vendor, vendorStyle } from "../lib/vendor.js";
import { pageHeader } from "../lib/ui.js";

export async function render(main) {
  main.appendChild(pageHeader("API reference"));
  main.appendChild(
    h(
      "p",
      "Every operation of this service, from its OpenAPI document. The roles each needs are in ",
      h("code", "x-etikett-access"),
      "; the operation's id is also its MCP tool name. ",
      h("a", { href: `${BASE}/openapi.json` }, "The document as JSON"),
      ".",
    ),
  );
  // Swagger UI (React) listens on this element for its controls' events (data-event-root).
  const host = h("section", { class: "api-reference", "aria-label": "Operations", "data-event-root": "" });
  main.appendChild(host);
  // Swagger UI puts its icons' symbol sheet (svg.svg-assets) into the page without hiding it from
  // assistive technology, where it would read as an unnamed image: it is only definitions.
  // Its document title is an h1 too: the page has one top heading (the page's own), so the title
  // is read as the level-2 heading under it.
  const fitIntoPage = () => {
    for (const sheet of host.querySelectorAll("svg.svg-assets:not([aria-hidden])")) sheet.setAttribute("aria-hidden", "true");
    for (const title of host.querySelectorAll("h1:not([aria-level])")) title.setAttribute("aria-level", "2");
  };
  new MutationObserver(fitIntoPage).observe(host, { childList: true, subtree: true });
  await vendorStyle("swagger-ui", "swagger-ui.css");
  const SwaggerUIBundle = await vendor("swagger-ui");
  SwaggerUIBundle({
    domNode: host,
    url: `${BASE}/openapi.json`,
    deepLinking: false,
    // Groups folded: a keyboard walks the groups, not several hundred operation controls.
    docExpansion: "none",
    defaultModelsExpandDepth: 0,
    displayOperationId: true,
    filter: true,
    validatorUrl: null, // never ask another host to validate the document
    // "Try it out" runs as the signed-in person, with the session cookie: changes carry the
    // console's CSRF header like every other request of the console.
    requestInterceptor: (request) => {
      if (request.method && request.method.toUpperCase() !== "GET") request.headers[CSRF_HEADER] = "1";
      request.credentials = "same-origin";
      return request;
    },
  });
}
