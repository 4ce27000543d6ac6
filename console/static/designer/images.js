// Images for labels from PNG, JPEG or SVG files. The renderer takes PNG or JPEG and reduces it
// to dots itself (dithered or by a threshold), and the canvas shows exactly that; an SVG is
// drawn to a PNG here first, at twice the dots it will cover, so its lines stay sharp. A picture
// larger than it needs to be is scaled down before it goes into the document.

import { dotsToMm } from "./units.js";

export const ACCEPT = "image/png,image/jpeg,image/svg+xml,.png,.jpg,.jpeg,.svg";
const MAX_SIDE_PX = 1600;

function readAs(file, how) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.onerror = () => reject(reader.error || new Error("The file could not be read."));
    if (how === "text") reader.readAsText(file);
    else reader.readAsDataURL(file);
  });
}

function loaded(src) {
  return new Promise((resolve, reject) => {
    const image = new Image();
    image.onload = () => resolve(image);
    image.onerror = () => reject(new Error("The browser cannot read this picture."));
    image.src = src;
  });
}

/**
 * The file as an image object's fields for a label of `dpi`, at most `maxWidthMm` wide:
 * {content_base64, width_mm, height_mm, dither, name}.
 */
export async function imageFromFile(file, dpi, maxWidthMm) {
  const svg = file.type === "image/svg+xml" || /\.svg$/i.test(file.name);
  const png = file.type === "image/png" || /\.png$/i.test(file.name);
  if (!svg && !png && !(file.type === "image/jpeg" || /\.jpe?g$/i.test(file.name))) {
    throw new Error("Choose a PNG, JPEG or SVG file.");
  }
  let image;
  let url = null;
  if (svg) {
    // An SVG becomes a picture in an <img>: no script of it runs, nothing it links is fetched.
    url = URL.createObjectURL(new Blob([await readAs(file, "text")], { type: "image/svg+xml" }));
    image = await loaded(url);
  } else {
    image = await loaded(await readAs(file, "data"));
  }
  try {
    const naturalW = image.naturalWidth || 300;
    const naturalH = image.naturalHeight || 150;
    // A bitmap's pixels become dots one for one unless that is wider than allowed.
    const widthDots = Math.min(naturalW, Math.round((maxWidthMm / 25.4) * dpi));
    const heightDots = Math.max(1, Math.round((widthDots * naturalH) / naturalW));
    const factor = svg ? 2 : 1;
    const scale = Math.min(1, MAX_SIDE_PX / Math.max(widthDots * factor, heightDots * factor), (widthDots * factor) / naturalW);
    const canvas = document.createElement("canvas");
    canvas.width = Math.max(1, Math.round(svg ? widthDots * factor : naturalW * scale));
    canvas.height = Math.max(1, Math.round(svg ? heightDots * factor : naturalH * scale));
    const context = canvas.getContext("2d");
    context.fillStyle = "#ffffff"; // transparency prints as paper
    context.fillRect(0, 0, canvas.width, canvas.height);
    context.drawImage(image, 0, 0, canvas.width, canvas.height);
    const type = png || svg ? "image/png" : "image/jpeg";
    const data = canvas.toDataURL(type, 0.92);
    return {
      content_base64: data.slice(data.indexOf(",") + 1),
      width_mm: dotsToMm(widthDots, dpi),
      height_mm: dotsToMm(heightDots, dpi),
      dither: png || svg ? "threshold" : "floyd-steinberg",
      name: file.name.replace(/\.[^.]+$/, "").replace(/[^A-Za-z0-9_.-]+/g, "_").slice(0, 40) || "image",
    };
  } finally {
    if (url) URL.revokeObjectURL(url);
  }
}

/** Opens the file chooser; resolves with the chosen file or null. */
export function chooseImage() {
  return new Promise((resolve) => {
    const input = document.createElement("input");
    input.type = "file";
    input.accept = ACCEPT;
    input.addEventListener("change", () => resolve(input.files?.[0] || null), { once: true });
    input.addEventListener("cancel", () => resolve(null), { once: true });
    input.click();
  });
}
