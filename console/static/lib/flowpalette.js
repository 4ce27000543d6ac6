// The flow editor's palette: every node type of the registry, grouped by kind, each with what it
// does. Drag one onto the canvas, or press it (Enter, Space, a click) to add it beside the
// chosen node.

import { h, nextId, replace } from "./dom.js";

const KINDS = [
  ["trigger", "Triggers", "Start the flow: every event becomes records."],
  ["logic", "Logic", "Shape and route records."],
  ["action", "Actions", "Print, call, write, log."],
];

/** The first sentence of a description, for the palette's short line. */
export function firstSentence(text) {
  const plain = String(text || "").replace(/`/g, "");
  const end = plain.search(/\.(\s|$)/);
  return end < 0 ? plain : plain.slice(0, end + 1);
}

/**
 * The palette of `registry.items`. `onAdd(type)` adds a node (keyboard or click);
 * `onDrag(type, event)` starts dragging one onto the canvas. `enabled: false` lists the types
 * without offering them (people who only read the flow).
 */
export function flowPalette(registry, { onAdd, onDrag, enabled = true }) {
  const search = h("input", {
    type: "search",
    class: "fe-search",
    placeholder: "Find a node type",
    "aria-label": "Find a node type",
  });
  const lists = h("div");
  const draw = () => {
    const wanted = search.value.trim().toLowerCase();
    const matches = (item) => !wanted || `${item.type} ${item.description}`.toLowerCase().includes(wanted);
    replace(
      lists,
      KINDS.map(([kind, title, what]) => {
        const items = registry.items.filter((item) => item.category === kind && matches(item));
        if (!items.length) return null;
        const headingId = nextId("kind");
        return h(
          "section",
          { class: "fe-kind", "aria-labelledby": headingId },
          h("h3", { id: headingId, title: what }, title),
          h(
            "ul",
            items.map((item) => {
              const short = firstSentence(item.description);
              const button = h(
                "button",
                {
                  type: "button",
                  class: ["fe-type", kind],
                  "data-type": item.type,
                  title: item.description.replace(/`/g, ""),
                  "aria-label": `Add ${item.type}: ${short}`,
                  disabled: !enabled,
                },
                h("span", { class: "name" }, item.type),
                h("span", { class: "what" }, short),
              );
              if (enabled) {
                button.addEventListener("click", () => onAdd(item.type));
                button.addEventListener("mousedown", (event) => {
                  if (event.button === 0) onDrag(item.type, event);
                });
              }
              return h("li", button);
            }),
          ),
        );
      }),
    );
    if (!lists.childElementCount) replace(lists, h("p", { class: "muted small" }, "No node type matches."));
  };
  search.addEventListener("input", draw);
  draw();
  return h("div", { class: "fe-palette-body" }, search, lists);
}
