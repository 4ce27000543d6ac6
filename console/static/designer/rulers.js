// Rulers in mm along the top and left of the canvas, zero at the label's top-left corner,
// following zoom and scrolling, with the pointer's position marked.

import { h } from "../lib/dom.js";
import { dotMm } from "./units.js";

const SIZE = 22; // px
const STEPS_MM = [0.5, 1, 2, 5, 10, 20, 50, 100];

export class Rulers {
  constructor(canvas, top, left) {
    this.canvas = canvas;
    this.top = h("canvas", { class: "dz-ruler dz-ruler-top", "aria-hidden": "true" });
    this.left = h("canvas", { class: "dz-ruler dz-ruler-left", "aria-hidden": "true" });
    top.append(this.top);
    left.append(this.left);
    this.pointer = null;
    canvas.on("view", () => this.draw());
  }

  mark(dotX, dotY) {
    this.pointer = dotX === null ? null : [dotX, dotY];
    this.draw();
  }

  draw() {
    this.drawOne(this.top, "x");
    this.drawOne(this.left, "y");
  }

  drawOne(element, axis) {
    const canvas = this.canvas;
    const length = axis === "x" ? canvas.viewport.clientWidth : canvas.viewport.clientHeight;
    if (!length) return;
    const ratio = window.devicePixelRatio || 1;
    const [w, h] = axis === "x" ? [length, SIZE] : [SIZE, length];
    if (element.width !== Math.round(w * ratio) || element.height !== Math.round(h * ratio)) {
      element.width = Math.round(w * ratio);
      element.height = Math.round(h * ratio);
      element.style.width = `${w}px`;
      element.style.height = `${h}px`;
    }
    const ctx = element.getContext("2d");
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.fillStyle = "#f3f5f8";
    ctx.fillRect(0, 0, w, h);
    const pxPerMm = canvas.scale / dotMm(canvas.dpi);
    const step = STEPS_MM.find((mm) => mm * pxPerMm >= 6) || 100;
    const labelled = STEPS_MM.find((mm) => mm * pxPerMm >= 48 && mm >= step) || 100;
    const [originX, originY] = canvas.pointOf(0, 0);
    const origin = axis === "x" ? originX : originY;
    const [labelW, labelH] = canvas.labelSize;
    const labelEnd = origin + (axis === "x" ? labelW : labelH) * canvas.scale;
    // The label's extent, lighter.
    ctx.fillStyle = "#ffffff";
    if (axis === "x") ctx.fillRect(Math.max(0, origin), 0, Math.max(0, Math.min(w, labelEnd) - Math.max(0, origin)), h);
    else ctx.fillRect(0, Math.max(0, origin), w, Math.max(0, Math.min(h, labelEnd) - Math.max(0, origin)));
    ctx.strokeStyle = "#8b97a8";
    ctx.fillStyle = "#46505e";
    ctx.font = "10px system-ui, sans-serif";
    ctx.lineWidth = 1;
    ctx.beginPath();
    const first = Math.floor(-origin / pxPerMm / step) * step;
    for (let mm = first; origin + mm * pxPerMm < length; mm += step) {
      const at = Math.round(origin + mm * pxPerMm) + 0.5;
      const rounded = Math.round(mm * 1000) / 1000;
      const major = Math.abs(rounded / labelled - Math.round(rounded / labelled)) < 1e-6;
      const tick = major ? SIZE - 4 : Math.abs(rounded / (step * 5) - Math.round(rounded / (step * 5))) < 1e-6 ? 8 : 5;
      if (axis === "x") {
        ctx.moveTo(at, SIZE);
        ctx.lineTo(at, SIZE - tick);
        if (major) ctx.fillText(String(rounded), at + 2, 10);
      } else {
        ctx.moveTo(SIZE, at);
        ctx.lineTo(SIZE - tick, at);
        if (major) {
          ctx.save();
          ctx.translate(10, at + 2);
          ctx.rotate(-Math.PI / 2);
          ctx.textAlign = "right";
          ctx.fillText(String(rounded), 0, 0);
          ctx.restore();
        }
      }
    }
    ctx.stroke();
    if (this.pointer) {
      const [px, py] = canvas.pointOf(...this.pointer);
      const at = axis === "x" ? px : py;
      ctx.strokeStyle = "#e5007a";
      ctx.beginPath();
      if (axis === "x") {
        ctx.moveTo(at, 0);
        ctx.lineTo(at, SIZE);
      } else {
        ctx.moveTo(0, at);
        ctx.lineTo(SIZE, at);
      }
      ctx.stroke();
    }
  }
}
