// Saving the flow editor's document as a new version: the changes as a JSON Patch against the
// version they were made on (base_version), with a comment; a newer version saved meanwhile is
// shown with who saved it, and nothing is overwritten.

import { ROOT } from "../app.js";
import { ApiError, listAll, patch } from "./api.js";
import { h } from "./dom.js";
import { patchOf } from "./flowpatch.js";
import { announce, button, dialog, field, form, notify } from "./ui.js";

/** The "Save version" dialog for `document` over `base` ({version, document}); `onSaved(answer)`
 * once patchFlowDocument saved it. */
export function saveVersion({ flowId, base, document, onSaved }) {
  const operations = patchOf(base.document, document);
  if (!operations.length) {
    notify(`Nothing to save: the flow is as version ${base.version}.`);
    return;
  }
  const count = operations.length;
  const comment = h("textarea", { name: "comment", rows: 3, maxlength: "1000", spellcheck: "true" });
  const { close } = dialog(
    `Save version ${base.version + 1}`,
    form(
      [
        h("p", `${count} change${count > 1 ? "s" : ""} to version ${base.version}, saved as a new version; version ${base.version} stays as it is.`),
        field("Comment", comment, { help: "What changed and why: the version history shows it." }),
      ],
      async () => {
        try {
          const answer = await patch(`/flows/${flowId}/document`, {
            operations,
            base_version: base.version,
            comment: comment.value.trim() || undefined,
          });
          close();
          onSaved(answer);
          notify(`Saved as version ${answer.version}.`);
          announce(`Saved as version ${answer.version}`);
        } catch (error) {
          if (error instanceof ApiError && error.code === "document.version_conflict") {
            close();
            await conflict(flowId, error.params?.latest_version);
            return;
          }
          throw error;
        }
      },
      { submitLabel: "Save version" },
    ),
  );
}

/** Who saved the newer version; the editor keeps the unsaved changes. */
async function conflict(flowId, latest) {
  const saved = await listAll(`/flows/${flowId}/versions`).catch(() => []);
  const newer = saved.find((v) => v.version === latest);
  const by = newer ? ` by ${newer.author.subject} (${newer.author.actor === "service" ? "an agent" : "a person"})` : "";
  const body = h(
    "div",
    h("p", `Version ${latest} was saved meanwhile${by}${newer?.comment ? `: “${newer.comment}”` : ""}.`),
    h("p", "Your changes are not saved, and nothing was overwritten. They stay here in the editor: compare the versions, then open the latest and make your changes there, or keep working here."),
  );
  const { close } = dialog("Someone saved a newer version", body, {
    actions: [
      h("a", { class: "button primary", href: `${ROOT}/flows/${flowId}/edit`, target: "_blank", rel: "noopener" }, `Open version ${latest} in a new tab`),
      button("Keep my changes here", () => close()),
    ],
  });
}
