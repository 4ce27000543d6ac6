// The label designer's page (/labels/:id/design): loads the label, its latest document, the
// published label schema and the canvas and form libraries, then hands them to the designer
// (designer/editor.js). Full width and height: the designer is a workbench, not a document.

import { ROOT } from "../app.js";
import { get, listAll } from "../lib/api.js";
import { h } from "../lib/dom.js";
import { can } from "../lib/session.js";
import { pageHeader } from "../lib/ui.js";
import { vendor } from "../lib/vendor.js";
import { Designer } from "../designer/editor.js";
import { jsonEditor } from "../designer/schemaform.js";

let styles = null;

/** The designer's stylesheet, from this origin (the CSP allows no inline styles). */
function stylesheet() {
  if (!styles) {
    styles = new Promise((resolve, reject) => {
      const link = h("link", { rel: "stylesheet", href: new URL("../designer/designer.css", import.meta.url).href });
      link.addEventListener("load", () => resolve(), { once: true });
      link.addEventListener("error", () => {
        styles = null;
        reject(new Error("The designer's stylesheet did not load."));
      }, { once: true });
      document.head.append(link);
    });
  }
  return styles;
}

export async function render(main, { id }) {
  if (!can("designer")) {
    main.append(
      pageHeader("Label designer", { crumbs: [[`${ROOT}/labels`, "Labels"]] }),
      h("p", "Designing labels needs the designer role. ", h("a", { href: `${ROOT}/labels/${encodeURIComponent(id)}` }, "See the label and its preview"), "."),
    );
    return undefined;
  }
  const [label, saved, schema, Konva, JSONEditor, counters] = await Promise.all([
    get(`/labels/${encodeURIComponent(id)}`),
    get(`/labels/${encodeURIComponent(id)}/document`),
    get("/schemas/label"),
    vendor("konva"),
    jsonEditor(),
    listAll("/counters", {}, 200).catch(() => []),
    stylesheet(),
  ]);
  main.classList.add("dz-main");
  const designer = new Designer({
    main,
    label,
    saved,
    schema,
    Konva,
    JSONEditor,
    counters: counters.filter((counter) => counter.active).map((counter) => counter.name),
  });
  await designer.start();
  return () => {
    designer.leave();
    main.classList.remove("dz-main");
  };
}
