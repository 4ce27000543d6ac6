// Copy and paste of objects, also between labels: the objects and the variables their
// expressions read travel together, kept in this browser (another tab or label pastes them) and
// offered to the system clipboard as JSON for other tools.

import { variablesUsed } from "./model.js";

const KEY = "etikett.designer.clipboard";
const KIND = "etikett/label-objects";

export function copyObjects(document, ids) {
  const chosen = new Set(ids);
  const objects = document.objects.filter((obj) => chosen.has(obj.id));
  if (!objects.length) return 0;
  const payload = { kind: KIND, dpi: document.dpi, objects, variables: variablesUsed(document, objects) };
  const text = JSON.stringify(payload);
  try {
    window.localStorage.setItem(KEY, text);
  } catch {
    /* full storage: the system clipboard may still take it */
  }
  navigator.clipboard?.writeText(text).catch(() => {});
  return objects.length;
}

/** What was copied last, or null. */
export function copied() {
  try {
    const payload = JSON.parse(window.localStorage.getItem(KEY) || "null");
    return payload && payload.kind === KIND && Array.isArray(payload.objects) ? payload : null;
  } catch {
    return null;
  }
}
