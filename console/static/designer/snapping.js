// Snapping while something is dragged: the moving boxes' edges and centres go to other objects'
// edges and centres and the label's, else to the grid, when they come within a few screen
// pixels. Everything is in printer dots; the answer is whole dots.

/** The x (or y) lines a box offers: its two edges and its centre. */
function lines(box, axis) {
  const [a, b] = axis === "x" ? [box[0], box[2]] : [box[1], box[3]];
  return [a, (a + b) / 2, b];
}

function nearest(candidates, targets, threshold) {
  let best = null;
  for (const from of candidates) {
    for (const to of targets) {
      const distance = to - from;
      if (Math.abs(distance) <= threshold && (!best || Math.abs(distance) < Math.abs(best.delta))) {
        best = { delta: distance, at: to };
      }
    }
  }
  return best;
}

/**
 * The move (dx, dy) in dots adjusted for snapping, with the guides to show.
 * `moving`: the dragged boxes' union at the start; `others`: boxes of objects not moving;
 * `label`: [width, height] in dots; `grid`: the grid step in dots (0: none); `threshold`: dots.
 */
export function snap({ moving, dx, dy, others, label, grid, threshold, toObjects = true, toGrid = true }) {
  const moved = [moving[0] + dx, moving[1] + dy, moving[2] + dx, moving[3] + dy];
  const guides = [];
  const result = [dx, dy];
  for (const [index, axis] of [[0, "x"], [1, "y"]]) {
    // An axis the pointer has hardly moved along stays put: a drag across never jumps down.
    if (Math.abs(result[index]) < threshold) {
      result[index] = Math.round(result[index]);
      continue;
    }
    const size = axis === "x" ? label[0] : label[1];
    const own = lines(moved, axis);
    let found = null;
    if (toObjects) {
      const targets = [0, size / 2, size];
      for (const box of others) targets.push(...lines(box, axis));
      found = nearest(own, targets, threshold);
    }
    if (found) {
      result[index] += found.delta;
      guides.push({ axis, at: found.at });
    } else if (toGrid && grid > 0) {
      // The leading edge goes to the nearest grid line.
      const edge = own[0];
      const line = Math.round(edge / grid) * grid;
      if (Math.abs(line - edge) <= Math.max(threshold, grid / 2)) result[index] += line - edge;
    }
    result[index] = Math.round(result[index]);
  }
  return { dx: result[0], dy: result[1], guides };
}

/** Snap a single position (a resize handle's edge) to the grid. */
export function snapToGrid(value, grid) {
  return grid > 0 ? Math.round(Math.round(value / grid) * grid) : Math.round(value);
}
