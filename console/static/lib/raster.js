// Print rasters (the 1-bit PNG previews) as pictures, and the visual diff of two of them.

import { h } from "./dom.js";

export const COLORS = {
  paper: [255, 255, 255],
  same: [40, 40, 40],
  removed: [207, 34, 46], // black only in the older version
  added: [9, 105, 218], // black only in the newer version
};

/** The preview as an <img> (kept crisp), with its size in dots as the accessible name. */
export function previewImage(result, label) {
  const img = h("img", {
    class: "raster",
    src: URL.createObjectURL(result.blob),
    alt: `${label}: ${result.width} × ${result.height} dots at ${result.dpi} dpi`,
    width: result.width,
    height: result.height,
  });
  img.addEventListener("load", () => URL.revokeObjectURL(img.src), { once: true });
  return img;
}

/** Which dots are black: {width, height, black: Uint8Array}. */
export async function dotsOf(blob) {
  const bitmap = await createImageBitmap(blob);
  const canvas = document.createElement("canvas");
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  const context = canvas.getContext("2d", { willReadFrequently: true });
  context.drawImage(bitmap, 0, 0);
  const pixels = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
  const black = new Uint8Array(bitmap.width * bitmap.height);
  for (let i = 0; i < black.length; i += 1) {
    black[i] = pixels[i * 4] < 128 ? 1 : 0;
  }
  return { width: bitmap.width, height: bitmap.height, black };
}

function paint(width, height, colorAt, label) {
  const canvas = h("canvas", { class: "raster", role: "img", "aria-label": label });
  canvas.width = width;
  canvas.height = height;
  const context = canvas.getContext("2d");
  const image = context.createImageData(width, height);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const [r, g, b] = colorAt(x, y);
      const o = (y * width + x) * 4;
      image.data[o] = r;
      image.data[o + 1] = g;
      image.data[o + 2] = b;
      image.data[o + 3] = 255;
    }
  }
  context.putImageData(image, 0, 0);
  return canvas;
}

function at(dots, x, y) {
  return x < dots.width && y < dots.height ? dots.black[y * dots.width + x] : 0;
}

/**
 * The changed dots of two rasters (padded to the larger size): a picture with unchanged ink dark,
 * dots only in `older` red, dots only in `newer` blue, and the counts.
 */
export function diff(older, newer, label = "Changed dots") {
  const width = Math.max(older.width, newer.width);
  const height = Math.max(older.height, newer.height);
  let removed = 0;
  let added = 0;
  let same = 0;
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x < width; x += 1) {
      const a = at(older, x, y);
      const b = at(newer, x, y);
      if (a && b) same += 1;
      else if (a) removed += 1;
      else if (b) added += 1;
    }
  }
  const canvas = paint(
    width,
    height,
    (x, y) => {
      const a = at(older, x, y);
      const b = at(newer, x, y);
      if (a && b) return COLORS.same;
      if (a) return COLORS.removed;
      if (b) return COLORS.added;
      return COLORS.paper;
    },
    `${label}: ${removed} dots removed, ${added} dots added`,
  );
  return { canvas, width, height, removed, added, same, resized: older.width !== newer.width || older.height !== newer.height };
}
