// The live preview: each document the designer shows is laid out by the service
// (postLabelLayout) and comes back as the print raster, every object's box in dots and the
// findings. Requests are debounced while someone types, sent at once at the end of a drag, and a
// request that a newer one supersedes is cancelled, so only the newest answer is ever painted.

import { ApiError, request } from "../lib/api.js";

const TYPING_MS = 120;

function bytesOf(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
  return bytes;
}

/** The layout's PNG as something a canvas can draw. */
export async function decodeRaster(base64) {
  const blob = new Blob([bytesOf(base64)], { type: "image/png" });
  return createImageBitmap(blob);
}

/** One layout answer with its raster decoded and its boxes by object id. */
export async function laidOut(answer) {
  const bitmap = await decodeRaster(answer.png_base64);
  return {
    ...answer,
    bitmap,
    boxes: new Map(answer.objects.map((item) => [item.id, item.box])),
    byId: new Map(answer.objects.map((item) => [item.id, item])),
  };
}

/** Lay a document out once (no debouncing): the Copilot's proposal, a print preview. */
export async function layOut(document, { variables, signal } = {}) {
  const answer = await request("POST", "/labels/layout", { json: { document, variables }, signal });
  return laidOut(answer);
}

export class LiveLayout {
  /**
   * `onResult(layout, document)` gets each newest answer; `onProblem(error, document)` a refusal
   * (an invalid document stays on screen as its last good layout); `onBusy(bool)`.
   */
  constructor({ onResult, onProblem, onBusy }) {
    this.onResult = onResult;
    this.onProblem = onProblem;
    this.onBusy = onBusy || (() => {});
    this.sequence = 0;
    this.timer = null;
    this.controller = null;
    this.variables = null;
  }

  /** Lay `document` out: at once (`immediate`), else when typing pauses. */
  request(document, { immediate = false } = {}) {
    clearTimeout(this.timer);
    if (immediate) this.send(document);
    else this.timer = setTimeout(() => this.send(document), TYPING_MS);
  }

  async send(document) {
    this.controller?.abort();
    const controller = new AbortController();
    this.controller = controller;
    const sequence = ++this.sequence;
    this.onBusy(true);
    try {
      const body = { document };
      if (this.variables) body.variables = this.variables;
      const answer = await request("POST", "/labels/layout", { json: body, signal: controller.signal });
      const result = await laidOut(answer);
      if (sequence !== this.sequence) return; // superseded while it decoded
      this.onResult(result, document);
    } catch (error) {
      if (error.name === "AbortError" || sequence !== this.sequence) return;
      this.onProblem(error instanceof ApiError ? error : new ApiError(0, { detail: String(error) }), document);
    } finally {
      if (sequence === this.sequence) this.onBusy(false);
    }
  }

  stop() {
    clearTimeout(this.timer);
    this.controller?.abort();
    this.sequence += 1;
  }
}
