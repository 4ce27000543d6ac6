// The live preview: each document the designer shows is laid out by the service
// (postLabelLayout) and comes back as the print raster, every object's box in dots and the
// findings. Requests are debounced while someone types, sent at once at the end of a drag, and a
// request that a newer one supersedes is cancelled, so only the newest answer is ever painted.

import { ApiError, request } from "../lib/api.js";

const TYPING_MS = 120;
const INK = 0xff000000; // opaque black as one little-endian RGBA word; paper stays transparent

function bytesOf(base64) {
  const text = atob(base64);
  const bytes = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i += 1) bytes[i] = text.charCodeAt(i);
  return bytes;
}

async function inflate(data) {
  const stream = new Blob([data]).stream().pipeThrough(new DecompressionStream("deflate"));
  return new Uint8Array(await new Response(stream).arrayBuffer());
}

/**
 * A raster's dots: {width, height, pixels} where `pixels` (one RGBA word per dot) is opaque
 * black where a dot prints and transparent paper elsewhere, ready for a canvas; `black` (1 per
 * printed dot) is worked out on first use (the visual diff reads it).
 */
function rasterOf(width, height, pixels) {
  let black = null;
  return {
    width,
    height,
    pixels,
    get black() {
      if (!black) {
        black = new Uint8Array(pixels.length);
        for (let i = 0; i < pixels.length; i += 1) black[i] = pixels[i] ? 1 : 0;
      }
      return black;
    },
  };
}

/** The service's 1-bit PNG (filter 0 rows, one zlib stream: engine/etikett_engine/render/png.py) read
 * directly into dots; any other PNG through the browser's decoder. */
async function dotsOfPng(png) {
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  let at = 8;
  let width = 0;
  let height = 0;
  let simple = false;
  const parts = [];
  while (at + 8 <= png.length) {
    const length = view.getUint32(at);
    const kind = String.fromCharCode(...png.subarray(at + 4, at + 8));
    const body = png.subarray(at + 8, at + 8 + length);
    if (kind === "IHDR") {
      width = view.getUint32(at + 8);
      height = view.getUint32(at + 12);
      // 1 bit, greyscale, no interlace: what the service writes.
      simple = body[8] === 1 && body[9] === 0 && body[12] === 0;
    } else if (kind === "IDAT") parts.push(body);
    at += 12 + length;
  }
  if (simple && parts.length) {
    const rows = await inflate(parts.length === 1 ? parts[0] : new Uint8Array(await new Blob(parts).arrayBuffer()));
    const stride = Math.ceil(width / 8) + 1;
    let unfiltered = rows.length === stride * height;
    for (let y = 0; unfiltered && y < height; y += 1) unfiltered = rows[y * stride] === 0;
    if (unfiltered) {
      const pixels = new Uint32Array(width * height);
      const bytes = stride - 1;
      for (let y = 0; y < height; y += 1) {
        const row = y * stride + 1;
        const out = y * width;
        for (let i = 0; i < bytes; i += 1) {
          const byte = rows[row + i];
          if (byte === 0xff) continue; // eight dots of paper: most of a label
          const x0 = i * 8;
          const last = Math.min(8, width - x0);
          for (let bit = 0; bit < last; bit += 1) {
            if (!((byte >> (7 - bit)) & 1)) pixels[out + x0 + bit] = INK; // PNG grey 0: a dot
          }
        }
      }
      return rasterOf(width, height, pixels);
    }
  }
  const bitmap = await createImageBitmap(new Blob([png], { type: "image/png" }));
  const canvas = document.createElement("canvas");
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  const context = canvas.getContext("2d", { willReadFrequently: true });
  context.drawImage(bitmap, 0, 0);
  const data = new Uint32Array(context.getImageData(0, 0, bitmap.width, bitmap.height).data.buffer);
  const pixels = new Uint32Array(data.length);
  for (let i = 0; i < data.length; i += 1) if ((data[i] & 0xff) < 128) pixels[i] = INK;
  return rasterOf(bitmap.width, bitmap.height, pixels);
}

/** The raster's dots from the layout's PNG (base64). */
export function decodeRaster(base64) {
  return dotsOfPng(bytesOf(base64));
}

/**
 * The dots on a transparent sheet (a canvas): painted over paper and grid with plain
 * compositing, and a dragged object's dots can be lifted off it. `canvas` is reused when given
 * (the live preview paints one label many times a second).
 */
export function inkOf(raster, canvas = document.createElement("canvas")) {
  if (canvas.width !== raster.width || canvas.height !== raster.height) {
    canvas.width = raster.width;
    canvas.height = raster.height;
  }
  const data = new ImageData(new Uint8ClampedArray(raster.pixels.buffer), raster.width, raster.height);
  canvas.getContext("2d").putImageData(data, 0, 0);
  return canvas;
}

/** One layout answer with its raster decoded (`raster`: the dots; `ink`: them on a canvas) and
 * its boxes by object id. */
export async function laidOut(answer, canvas) {
  const raster = await decodeRaster(answer.png_base64);
  return {
    ...answer,
    raster,
    ink: inkOf(raster, canvas),
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
    this.canvas = document.createElement("canvas");
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
      if (sequence !== this.sequence) return;
      performance.mark("designer:answer"); // the bench splits the round trip here
      const result = await laidOut(answer, this.canvas);
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
