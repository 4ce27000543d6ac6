// Millimetres, points and printer dots, rounded exactly as the renderer rounds them
// (engine/etikett_engine/render/units.py: round(mm / 25.4 × dpi), half to even), so that a position the
// designer computes in dots is the very dot the printer prints.

export const MM_PER_INCH = 25.4;
export const CSS_PX_PER_INCH = 96; // zoom 100 % shows the label at its real size

/** Python's round(): halves go to the even neighbour. */
export function roundHalfEven(value) {
  const floor = Math.floor(value);
  const fraction = value - floor;
  if (Math.abs(fraction - 0.5) < 1e-9) return floor % 2 === 0 ? floor : floor + 1;
  return Math.round(value);
}

export function mmToDots(mm, dpi) {
  return roundHalfEven((mm / MM_PER_INCH) * dpi);
}

/**
 * A length in mm that the renderer turns into exactly `dots`: of all such lengths the one with
 * the fewest decimals, nearest the exact value. Every dot spans 1/dpi in, so at 203 dpi one
 * decimal always suffices (15 mm, not 15.0148): documents stay tidy and positions print-exact.
 */
export function dotsToMm(dots, dpi) {
  const exact = (dots * MM_PER_INCH) / dpi;
  const span = MM_PER_INCH / dpi;
  for (let decimals = 0; decimals <= 4; decimals += 1) {
    const step = 10 ** -decimals;
    const low = Math.ceil((exact - span / 2) / step) * step;
    let best = null;
    for (let candidate = low; candidate < exact + span / 2; candidate += step) {
      const value = Number(candidate.toFixed(decimals));
      if (mmToDots(value, dpi) !== dots) continue;
      if (best === null || Math.abs(value - exact) < Math.abs(best - exact)) best = value;
    }
    if (best !== null) return best;
  }
  return Math.round(exact * 10000) / 10000;
}

export function labelDots(document) {
  const { width_mm: width, height_mm: height } = document.size;
  const dpi = document.dpi || 203;
  return [Math.max(1, mmToDots(width, dpi)), Math.max(1, mmToDots(height, dpi))];
}

/** A length for people: "12.5 mm" (two decimals at most). */
export function mmText(mm) {
  return `${Math.round(mm * 100) / 100} mm`;
}

export function dotMm(dpi) {
  return MM_PER_INCH / dpi;
}
