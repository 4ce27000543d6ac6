// Keeps the keyboard focus in place when a page redraws the part that held it (a table reloaded
// after "Grant", a stage redrawn after "Approve"): focus goes to the same control in the redrawn
// part, else to the redrawn part itself, else to the nearest heading. Without this, focus falls
// to the start of the document and a keyboard user has to find their place again.

const FOCUSABLE = "a[href], button, input, select, textarea, summary, [tabindex]";

function nameOf(el) {
  return (el.getAttribute("aria-label") || el.textContent || "").trim();
}

function shown(el) {
  return el.getClientRects().length > 0 && !el.closest("[hidden], [inert]");
}

/** The element's ancestors up to <body>, nearest first: where it was, for when it is gone. */
export function trailOf(el) {
  const trail = [];
  for (let node = el && el.parentElement; node && node !== document.body; node = node.parentElement) {
    trail.push(node);
  }
  return trail;
}

function focusOn(el) {
  if (!el.matches(FOCUSABLE) || el.disabled) el.tabIndex = -1;
  el.focus({ preventScroll: false });
}

/** Focus the place of `lost` (no longer in the document), found along its `trail`. */
export function restoreFocus(lost, trail) {
  const anchor = trail.find((node) => node.isConnected);
  // Only within a page: the router places focus itself when the whole page is replaced.
  if (!anchor || !anchor.closest("main")) return false;
  const name = nameOf(lost);
  const again = name
    ? [...anchor.querySelectorAll(lost.tagName)].find((el) => nameOf(el) === name && shown(el))
    : null;
  if (again) {
    focusOn(again);
    return true;
  }
  for (const gone of trail) {
    if (gone === anchor) break;
    const label = gone.getAttribute("aria-label");
    const redrawn = label && anchor.querySelector(`${gone.tagName}[aria-label="${CSS.escape(label)}"]`);
    if (redrawn && shown(redrawn)) {
      focusOn(redrawn);
      return true;
    }
  }
  const part = anchor.closest("section, article, [role=tabpanel], dialog, main");
  const heading = part && [...part.querySelectorAll("h1, h2, h3")].find(shown);
  focusOn(heading || anchor);
  return true;
}

/**
 * Watch the document: when the focused element is removed (or moved) by a redraw and nothing
 * else took focus, put focus back in its place. A person moving focus away themselves (a click
 * on the page's background) is left alone: only a removal in the same task counts.
 */
export function keepFocus() {
  let pending = null;
  document.addEventListener("focusout", (event) => {
    if (event.relatedTarget) return;
    const lost = { el: event.target, trail: trailOf(event.target) };
    pending = lost;
    window.setTimeout(() => {
      if (pending === lost) pending = null;
    });
  });
  new MutationObserver((records) => {
    const lost = pending;
    if (!lost) return;
    pending = null;
    const active = document.activeElement;
    if (active && active !== document.body) return;
    const chain = [lost.el, ...lost.trail];
    const removed =
      !lost.el.isConnected || records.some((record) => [...record.removedNodes].some((node) => chain.includes(node)));
    if (!removed) return;
    if (lost.el.isConnected && shown(lost.el)) lost.el.focus();
    else restoreFocus(lost.el, lost.trail);
  }).observe(document.body, { childList: true, subtree: true });
}
