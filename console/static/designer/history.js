// Undo and redo of every change to the document. Documents are values (model.js never changes
// one in place), so each step keeps a document, sharing the objects it did not change. Steps of
// one gesture (typing in one field, nudging with the arrow keys) are one step when they follow
// each other closely.

export const LIMIT = 200; // steps kept; at least 100 is promised
const COALESCE_MS = 1200;

export class History {
  constructor(document, limit = LIMIT) {
    this.limit = limit;
    this.steps = [{ document, label: "Open", key: null, at: 0 }];
    this.position = 0;
  }

  get document() {
    return this.steps[this.position].document;
  }

  /** Record `document` as the next step; `key` joins it to the step before when that step had
   * the same key moments ago. */
  push(document, label, key = null, now = Date.now()) {
    this.steps.length = this.position + 1; // what was undone is gone once something new happens
    const last = this.steps[this.position];
    if (key && last.key === key && now - last.at < COALESCE_MS && this.position > 0) {
      this.steps[this.position] = { document, label, key, at: now };
      return;
    }
    this.steps.push({ document, label, key, at: now });
    if (this.steps.length > this.limit + 1) this.steps.shift();
    this.position = this.steps.length - 1;
  }

  /** Start again from `document` (after a save or a load): nothing to undo. */
  reset(document) {
    this.steps = [{ document, label: "Open", key: null, at: 0 }];
    this.position = 0;
  }

  get canUndo() {
    return this.position > 0;
  }

  get canRedo() {
    return this.position < this.steps.length - 1;
  }

  /** What undo would take back (for its button's name). */
  get undoLabel() {
    return this.canUndo ? this.steps[this.position].label : null;
  }

  get redoLabel() {
    return this.canRedo ? this.steps[this.position + 1].label : null;
  }

  undo() {
    if (!this.canUndo) return null;
    this.position -= 1;
    this.steps[this.position].key = null; // an edit after undo never merges into this step
    return this.document;
  }

  redo() {
    if (!this.canRedo) return null;
    this.position += 1;
    this.steps[this.position].key = null;
    return this.document;
  }
}
