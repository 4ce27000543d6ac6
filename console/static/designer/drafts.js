// Unsaved work kept in this browser, per label: each change is written here (a moment after it
// happens), so a reload, a crash or a closed tab loses nothing. A draft remembers the version it
// started from, so coming back after someone else saved is noticed.

const PREFIX = "etikett.designer.draft.";

export function readDraft(labelId) {
  try {
    const draft = JSON.parse(window.localStorage.getItem(PREFIX + labelId) || "null");
    return draft && draft.document && Number.isInteger(draft.base_version) ? draft : null;
  } catch {
    return null;
  }
}

/** Keep `document` (started from `baseVersion`); answers false when the browser has no room. */
export function writeDraft(labelId, baseVersion, document) {
  try {
    window.localStorage.setItem(
      PREFIX + labelId,
      JSON.stringify({ base_version: baseVersion, document, saved_at: new Date().toISOString() }),
    );
    return true;
  } catch {
    return false;
  }
}

export function dropDraft(labelId) {
  try {
    window.localStorage.removeItem(PREFIX + labelId);
  } catch {
    /* nothing kept */
  }
}

/** Writes the newest document a moment after changes stop (and at once on `flush`). */
export class DraftKeeper {
  constructor(labelId, onFull) {
    this.labelId = labelId;
    this.onFull = onFull;
    this.timer = null;
    this.pending = null;
  }

  keep(baseVersion, document, dirty) {
    clearTimeout(this.timer);
    if (!dirty) {
      this.pending = null;
      dropDraft(this.labelId);
      return;
    }
    this.pending = [baseVersion, document];
    this.timer = setTimeout(() => this.flush(), 300);
  }

  flush() {
    clearTimeout(this.timer);
    if (!this.pending) return;
    const [baseVersion, document] = this.pending;
    this.pending = null;
    if (!writeDraft(this.labelId, baseVersion, document)) this.onFull?.();
  }
}
