// Saving: the designer's changes become a new draft version (patchLabelDocument with the
// version they started from and a comment). When someone, a person or an agent, saved a version
// meanwhile, nothing is overwritten: the designer says who and when, and offers to compare their
// version with these changes (the console's visual diff), to apply these changes on top of
// theirs, or to take theirs.

import { ApiError, get, request } from "../lib/api.js";
import { h, replace } from "../lib/dom.js";
import { author, when } from "../lib/format.js";
import { diff } from "../lib/raster.js";
import { button, dialog, errorBox, field, form, loading } from "../lib/ui.js";
import { documentChanges } from "../pages/label.js";
import { layOut } from "./layout.js";
import { mergeDocuments, operations } from "./merge.js";

/** Save `document` (started from `baseVersion`) as a new version; answers the API's answer, or
 * throws the ApiError (a 409 is `document.version_conflict`). */
export async function saveVersion(labelId, base, document, baseVersion, comment) {
  const ops = operations(base, document);
  return request("PATCH", `/labels/${encodeURIComponent(labelId)}/document`, {
    json: { operations: ops, base_version: baseVersion, comment: comment || undefined },
  });
}

/** The comment dialog; resolves with the comment, or null when cancelled. */
export function askComment(version) {
  return new Promise((resolve) => {
    const comment = h("textarea", { name: "comment", rows: 3, maxlength: 1000, placeholder: "What changed and why (optional)" });
    let done = false;
    const { close } = dialog(
      `Save as version ${version}`,
      form(
        [
          h("p", "The changes are saved as a new draft version. An approver releases it before it prints."),
          field("Comment", comment),
        ],
        async () => {
          done = true;
          close();
          resolve(comment.value.trim());
        },
        { submitLabel: "Save version" },
      ),
      { onClose: () => !done && resolve(null) },
    );
  });
}

/** Their version against these changes: both rasters, the changed dots, the changed objects. */
async function comparison(theirs, mine, theirVersion) {
  const [a, b] = await Promise.all([layOut(theirs), layOut(mine)]);
  const changes = diff(a.raster, b.raster, `Changed dots from version ${theirVersion} to your changes`);
  const picture = (layout, name) => {
    const canvas = layout.ink; // a canvas of its own (layOut)
    canvas.className = "raster";
    canvas.setAttribute("role", "img");
    canvas.setAttribute("aria-label", name);
    return canvas;
  };
  const lines = documentChanges(theirs, mine);
  return h(
    "div",
    { class: "dz-compare" },
    h(
      "p",
      { class: "diff-summary", role: "status" },
      changes.removed + changes.added === 0
        ? "Your changes print the same dots as their version."
        : `${changes.removed.toLocaleString("en")} dots only in version ${theirVersion}, ${changes.added.toLocaleString("en")} only in yours.`,
    ),
    h(
      "div",
      { class: "compare-grid" },
      h("figure", picture(a, `Version ${theirVersion}`), h("figcaption", `Version ${theirVersion}`)),
      h("figure", picture(b, "Your changes"), h("figcaption", "Your changes")),
      h(
        "figure",
        changes.canvas,
        h("figcaption", h("span", { class: "swatch removed" }), ` only in v${theirVersion} `, h("span", { class: "swatch added" }), " only in yours"),
      ),
    ),
    lines.length
      ? h("ul", { class: "changes", "aria-label": "Document changes" }, lines.map(([kind, text]) => h("li", { class: kind }, text)))
      : null,
  );
}

/**
 * Someone saved since `baseVersion`. Shows who and offers: compare, apply mine on theirs, take
 * theirs. Resolves with {action: "merged"|"theirs"|"cancel", document?, version, conflicts?}.
 */
export async function resolveConflict(labelId, base, mine, baseVersion) {
  const label = await get(`/labels/${encodeURIComponent(labelId)}`);
  const latest = label.latest_version;
  const theirs = await get(`/labels/${encodeURIComponent(labelId)}/versions/${latest}`);
  return new Promise((resolve) => {
    let answered = false;
    const finish = (value) => {
      if (answered) return;
      answered = true;
      resolve(value);
    };
    const compareArea = h("div", { class: "dz-compare-area", "aria-live": "polite" });
    const compareButton = button("Compare their version with my changes", async () => {
      replace(compareArea, loading("Laying out both…"));
      try {
        replace(compareArea, await comparison(theirs.document, mine, latest));
      } catch (error) {
        replace(compareArea, errorBox(error));
      }
    });
    const apply = h("button", { type: "button", class: "primary" }, `Apply my changes to version ${latest}`);
    const take = h("button", { type: "button", class: "danger" }, `Discard my changes, open version ${latest}`);
    const { close } = dialog(
      "Someone saved meanwhile",
      [
        h(
          "p",
          { class: "warning" },
          `Version ${latest} was saved by ${author(theirs.author)} (${when(theirs.created_at)}) after version ${baseVersion}, which your changes started from. Nothing was overwritten.`,
        ),
        theirs.comment ? h("p", "Their comment: ", h("q", theirs.comment)) : null,
        h("div", { class: "actions" }, compareButton),
        compareArea,
      ],
      { actions: [apply, take], wide: true, onClose: () => finish({ action: "cancel" }) },
    );
    apply.addEventListener("click", () => {
      const merged = mergeDocuments(base, mine, theirs.document);
      finish({ action: "merged", version: latest, theirs: theirs.document, ...merged });
      close();
    });
    take.addEventListener("click", () => {
      finish({ action: "theirs", version: latest, document: theirs.document });
      close();
    });
  });
}

export function isConflict(error) {
  return error instanceof ApiError && error.code === "document.version_conflict";
}
