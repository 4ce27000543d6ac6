// Inline checks of CEL expression fields: each is sent to the service (postCelEvaluate) with the
// label's declared types and the values the current layout used, as someone types; the field
// shows the value it gives or where it is wrong (line and column), and is marked invalid.

import { post } from "../lib/api.js";
import { h, nextId } from "../lib/dom.js";

const WAIT_MS = 300;
const COUNTER = /\bcounters\.([A-Za-z_][A-Za-z0-9_]*)/g;

function shown(value) {
  const text = typeof value === "string" ? JSON.stringify(value) : JSON.stringify(value);
  return text.length > 80 ? `${text.slice(0, 77)}…` : text;
}

/**
 * Checks every CEL field under `root` (a property form). `context()` answers {types, values}:
 * the declared variables' types and the values of the current layout.
 */
export function checkCel(root, context) {
  const stops = [];
  for (const field of root.querySelectorAll("[data-cel]")) {
    const note = h("p", { class: "dz-cel-note", id: nextId("cel"), "aria-live": "polite" });
    field.after(note);
    const described = [field.getAttribute("aria-describedby"), note.id].filter(Boolean).join(" ");
    field.setAttribute("aria-describedby", described);
    let timer = null;
    let controller = null;
    const check = async () => {
      const expression = field.value.trim();
      controller?.abort();
      if (!expression) {
        note.textContent = "";
        field.removeAttribute("aria-invalid");
        return;
      }
      controller = new AbortController();
      const { types, values } = context();
      const counters = {};
      for (const [, name] of expression.matchAll(COUNTER)) counters[name] = 1;
      try {
        const result = await post(
          "/cel/evaluate",
          { expression, types, variables: values, counters },
          { signal: controller.signal },
        );
        note.className = "dz-cel-note ok";
        note.textContent = `= ${shown(result.value)} (${result.type})`;
        field.removeAttribute("aria-invalid");
      } catch (error) {
        if (error.name === "AbortError") return;
        const where = error.params?.line ? `line ${error.params.line}, column ${error.params.column}: ` : "";
        note.className = "dz-cel-note bad";
        note.textContent = `${where}${error.params?.message || error.message}`;
        field.setAttribute("aria-invalid", "true");
      }
    };
    const onInput = () => {
      clearTimeout(timer);
      timer = setTimeout(check, WAIT_MS);
    };
    field.addEventListener("input", onInput);
    check();
    stops.push(() => {
      clearTimeout(timer);
      controller?.abort();
    });
  }
  return () => stops.forEach((stop) => stop());
}
