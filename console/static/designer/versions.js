// Versions in the designer: drafts kept in the browser and brought back, saving as a new
// version, someone else's version saved meanwhile (compare, merge or take theirs), a Copilot
// proposal accepted as a version; mixed into the Designer (editor.js).

import { get } from "../lib/api.js";
import { h, replace } from "../lib/dom.js";
import { ago } from "../lib/format.js";
import { button, notify } from "../lib/ui.js";
import { dropDraft, readDraft } from "./drafts.js";
import { askComment, isConflict, resolveConflict, saveVersion } from "./saving.js";

const same = (a, b) => a === b || JSON.stringify(a) === JSON.stringify(b);

export class Versions {
  // --- saving, drafts, conflicts ----------------------------------------------------------------

  async restoreDraft() {
    const draft = readDraft(this.labelId);
    if (!draft || same(draft.document, this.base) || draft.base_version > this.baseVersion) {
      if (draft) dropDraft(this.labelId);
      return;
    }
    const newer = draft.base_version < this.baseVersion;
    if (newer) {
      // The changes are against the version they started from: that is the base of a save.
      const started = await get(`/labels/${encodeURIComponent(this.labelId)}/versions/${draft.base_version}`);
      this.base = started.document;
      this.baseVersion = draft.base_version;
    }
    this.document = draft.document;
    this.history.push(draft.document, "Unsaved changes from this browser");
    this.showBanner(
      newer
        ? `Your unsaved changes (${ago(draft.saved_at)}) are back. They started from version ${draft.base_version}; version ${this.baseVersion} was saved since — saving will ask how to combine them.`
        : `Your unsaved changes (${ago(draft.saved_at)}) are back.`,
      [button("Discard them", () => this.discardDraft())],
    );
  }

  discardDraft() {
    dropDraft(this.labelId);
    this.hideBanner();
    this.reload();
  }

  async reload(version) {
    const saved = await get(`/labels/${encodeURIComponent(this.labelId)}/document`, { version });
    this.label = await get(`/labels/${encodeURIComponent(this.labelId)}`);
    this.baseVersion = saved.version;
    this.base = saved.document;
    this.history.reset(saved.document);
    this.show(saved.document, { immediate: true, select: [] });
  }

  showBanner(text, actions = []) {
    replace(this.banner, h("p", text), h("div", { class: "actions" }, actions));
    this.banner.hidden = false;
  }

  hideBanner() {
    this.banner.hidden = true;
    replace(this.banner);
  }

  async save() {
    if (!this.dirty) {
      notify("Nothing to save: the label is as saved.");
      return;
    }
    const comment = await askComment(Math.max(this.label.latest_version, this.baseVersion) + 1);
    if (comment === null) return;
    const document = this.document;
    try {
      const saved = await saveVersion(this.labelId, this.base, document, this.baseVersion, comment);
      this.saved(saved, document);
      notify(`Saved as version ${saved.version}.`);
    } catch (error) {
      if (!isConflict(error)) throw error;
      await this.conflict(document);
    }
  }

  async conflict(document) {
    const outcome = await resolveConflict(this.labelId, this.base, document, this.baseVersion);
    if (outcome.action === "theirs") {
      dropDraft(this.labelId);
      this.hideBanner();
      await this.reload(outcome.version);
      notify(`Version ${outcome.version} is open; your changes were discarded.`);
    } else if (outcome.action === "merged") {
      this.baseVersion = outcome.version;
      this.label = { ...this.label, latest_version: Math.max(this.label.latest_version, outcome.version) };
      this.base = outcome.theirs;
      this.hideBanner();
      this.change(outcome.document, `Apply my changes to version ${outcome.version}`, { immediate: true });
      const note = outcome.conflicts.length ? ` Changed on both sides: ${outcome.conflicts.join("; ")}.` : "";
      this.showBanner(`Your changes are applied to version ${outcome.version}; check them and save.${note}`, [button("Save", () => this.save(), { class: "primary" })]);
    }
  }

  saved(answer, document) {
    this.baseVersion = answer.version;
    this.base = answer.document;
    this.label = { ...this.label, latest_version: answer.version };
    this.hideBanner();
    dropDraft(this.labelId);
    // The service's document (its defaults written out) replaces the one saved, unless the
    // designer changed it again meanwhile.
    if (this.document === document) {
      this.history.push(answer.document, "Save");
      this.document = answer.document;
    }
    this.drafts.keep(this.baseVersion, this.document, this.dirty);
    this.refresh();
  }

  /** A version the Copilot's proposal was saved as. */
  accepted(answer) {
    this.saved(answer, this.document);
    this.show(answer.document, { immediate: true });
    notify(`The proposal is saved as version ${answer.version}.`);
  }

  showProposal(diffCanvas) {
    this.canvas.setOverlay(diffCanvas);
    this.showBanner("Showing the Copilot's proposal: red dots go, blue dots come. Accept or reject it in the Copilot panel.", []);
  }

  hideProposal() {
    this.canvas.setOverlay(null);
    this.hideBanner();
  }
}
