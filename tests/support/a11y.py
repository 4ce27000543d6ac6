"""Accessibility checks of a console page as the browser sees it: accessible names from
chromium's own accessibility tree, the Tab order with a visible focus indicator, controls only a
mouse can reach, and sideways scrolling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from playwright.sync_api import BrowserContext, Page

# Roles a person operates or must be told about; each needs a name.
NAMED_ROLES = {
    "button",
    "link",
    "textbox",
    "searchbox",
    "combobox",
    "listbox",
    "checkbox",
    "radio",
    "switch",
    "spinbutton",
    "slider",
    "tab",
    "tabpanel",
    "tablist",
    "dialog",
    "img",
    "image",
    "progressbar",
    "navigation",
    "search",
    "columnheader",
    "menuitem",
}

# Put in every page before its scripts: remembers the elements that get a click handler, to
# find those the keyboard cannot reach.
TRACK_CLICKS = """(() => {
  const add = EventTarget.prototype.addEventListener;
  const seen = new WeakSet();
  window.__clickables = [];
  EventTarget.prototype.addEventListener = function (type, listener, options) {
    const pointer = ["click", "mousedown", "pointerdown"].includes(type);
    if (pointer && this instanceof Element && !seen.has(this)) {
      seen.add(this);
      window.__clickables.push(new WeakRef(this));
    }
    return add.call(this, type, listener, options);
  };
})();"""

# A stable id per element for the walk (a data attribute the console never uses).
_WALK_ID = """(el) => el.dataset.walk
  || (el.dataset.walk = String((window.__walk = (window.__walk || 0) + 1)))"""

_SHOWN = """(el) => el.getClientRects().length > 0 && !el.closest('[hidden], [inert]')
  && getComputedStyle(el).visibility !== 'hidden'
  && !(el.closest('details:not([open])') && !el.matches('details > summary'))"""

# Elements Tab must reach: focusable, shown, in the open modal dialog if there is one; a radio
# group is one stop (its checked radio, else its first).
_TABBABLE = f"""() => {{
  const shown = {_SHOWN};
  const walkId = {_WALK_ID};
  const modal = document.querySelector('dialog[open]');
  const scope = modal || document;
  const all = [...scope.querySelectorAll(
    'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]')];
  return all.filter((el) => el.tabIndex >= 0 && !el.disabled && shown(el)).filter((el) => {{
    if (el.type !== 'radio' || !el.name) return true;
    const group = all.filter((o) => o.type === 'radio' && o.name === el.name && o.form === el.form);
    const checked = group.find((o) => o.checked);
    return checked ? el === checked : el === group[0];
  }}).map(walkId);
}}"""

# The focused element: its walk id, what it is, whether it shows, and the contrast of its focus
# indicator (outline, or the stroke of an SVG node) against what is behind it.
_FOCUSED = f"""() => {{
  const el = document.activeElement;
  if (!el || el === document.body || el === document.documentElement) return null;
  ({_WALK_ID})(el);
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => {{
    const f = (v) => ((v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  }};
  const contrast = (a, b) => {{
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  }};
  const behind = (node) => {{
    for (let n = node; n && n.nodeType === 1; n = n.parentElement) {{
      const c = rgb(getComputedStyle(n).backgroundColor);
      if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3);
    }}
    return [255, 255, 255];
  }};
  const style = getComputedStyle(el);
  let ring = 0;
  if (style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2) {{
    ring = contrast(rgb(style.outlineColor).slice(0, 3), behind(el.parentElement));
  }} else if (el instanceof SVGElement && el.querySelector('rect')) {{
    const shape = getComputedStyle(el.querySelector('rect'));
    if (parseFloat(shape.strokeWidth) >= 2) ring = contrast(rgb(shape.stroke), rgb(shape.fill));
  }}
  const rect = el.getBoundingClientRect();
  const name = el.getAttribute('aria-label') || (el.textContent || '').trim() || el.name || '';
  return {{
    walk: el.dataset.walk,
    what: `${{el.tagName.toLowerCase()}} ${{JSON.stringify(name.slice(0, 50))}}`,
    shown: rect.width > 0 && rect.height > 0,
    ring: Math.round(ring * 100) / 100,
    in_dialog: Boolean(el.closest('dialog[open]')),
  }};
}}"""

_MOUSE_ONLY = f"""() => {{
  const shown = {_SHOWN};
  const keyboard = 'a[href], button, input, select, textarea, summary, dialog, label, [role=tab]';
  return (window.__clickables || []).map((ref) => ref.deref())
    .filter((el) => el && el.isConnected && shown(el))
    .filter((el) => !el.matches(keyboard) && !(el.tabIndex >= 0 && el.hasAttribute('tabindex')))
    // A vendored library's root, where it listens for its controls' events (React delegates
    // every click to the element it renders into): not a control; its controls are checked.
    .filter((el) => !el.hasAttribute('data-event-root'))
    .map((el) => el.outerHTML.slice(0, 120));
}}"""


def track_clicks(context: BrowserContext) -> None:
    context.add_init_script(TRACK_CLICKS)


def unnamed(page: Page) -> list[str]:
    """Nodes of chromium's accessibility tree with a role that needs a name, but no name."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    found = []
    for node in nodes:
        role = (node.get("role") or {}).get("value")
        name = str((node.get("name") or {}).get("value") or "").strip()
        if not node.get("ignored") and role in NAMED_ROLES and not name:
            found.append(f"{role} (backend node {node.get('backendDOMNodeId')})")
    return found


def top_headings(page: Page) -> list[str]:
    """The names of the level-1 headings in chromium's accessibility tree (which, unlike
    Playwright's role selectors, honours an aria-level set on an h1)."""
    cdp = page.context.new_cdp_session(page)
    try:
        nodes = cdp.send("Accessibility.getFullAXTree")["nodes"]
    finally:
        cdp.detach()
    found = []
    for node in nodes:
        if node.get("ignored") or (node.get("role") or {}).get("value") != "heading":
            continue
        properties = {p["name"]: p["value"].get("value") for p in node.get("properties", [])}
        if properties.get("level") == 1:
            found.append(str((node.get("name") or {}).get("value") or ""))
    return found


@dataclass
class Walk:
    """What pressing Tab (from wherever focus is) until focus comes round again found."""

    stops: list[dict[str, Any]]
    unreached: list[str]
    cycled: bool

    def problems(self, min_contrast: float = 3.0) -> list[str]:
        """Every stop with no visible focus or a faint one, each tabbable element Tab missed,
        and a walk that never came round (a trap)."""
        out = [f"focus not shown on {s['what']}" for s in self.stops if not s["shown"]]
        out += [
            f"focus indicator {s['ring']}:1 (< {min_contrast}:1) on {s['what']}"
            for s in self.stops
            if s["ring"] < min_contrast
        ]
        out += [f"Tab never reaches {what}" for what in self.unreached]
        if not self.cycled:
            out.append("Tab never came round: focus is trapped or lost")
        return out


def tab_walk(page: Page, key: str = "Tab", limit: int = 400) -> Walk:
    """Press `key` until focus returns to the first element it reached."""
    expected = page.evaluate(_TABBABLE)
    stops: list[dict[str, Any]] = []
    seen: set[str] = set()
    cycled = False
    for _ in range(limit):
        page.keyboard.press(key)
        stop = page.evaluate(_FOCUSED)
        if stop is None:  # between the document's end and its start
            continue
        if stops and stop["walk"] == stops[-1]["walk"]:
            continue  # the parts of one control (a date's day, month and year)
        if stop["walk"] in seen:
            cycled = stop["walk"] == stops[0]["walk"]
            break
        seen.add(stop["walk"])
        stops.append(stop)
    described = page.evaluate(
        """(ids) => ids.map((id) => {
            const el = document.querySelector(`[data-walk="${id}"]`);
            return el ? el.outerHTML.slice(0, 120) : id;
        })""",
        [walk for walk in expected if walk not in seen],
    )
    return Walk(stops, described, cycled)


def mouse_only(page: Page) -> list[str]:
    """Shown elements with a click handler that the keyboard cannot focus."""
    return list(page.evaluate(_MOUSE_ONLY))


def broken_patterns(page: Page) -> list[str]:
    """Fields whose `pattern` the browser cannot compile (it reads them with the `v` flag, as
    `^(?:pattern)$`): such a field silently accepts anything."""
    return list(
        page.evaluate(
            """() => [...document.querySelectorAll('[pattern]')].filter((el) => {
                try { new RegExp(`^(?:${el.getAttribute('pattern')})$`, 'v'); return false; }
                catch { return true; }
            }).map((el) => `${el.name}: ${el.getAttribute('pattern')}`)"""
        )
    )


def sideways_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the window (0: no sideways scrolling)."""
    return int(
        page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    )
