// Building the page: h() makes elements, nothing here knows the API.

const SVG_NS = "http://www.w3.org/2000/svg";

function append(parent, child) {
  if (child === null || child === undefined || child === false || child === true) return;
  if (Array.isArray(child)) {
    for (const item of child) append(parent, item);
  } else if (child instanceof Node) {
    parent.appendChild(child);
  } else {
    parent.appendChild(document.createTextNode(String(child)));
  }
}

function apply(el, attrs) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else if (key === "class") {
      el.setAttribute("class", Array.isArray(value) ? value.filter(Boolean).join(" ") : value);
    } else if (key === "dataset") {
      Object.assign(el.dataset, value);
    } else if (key === "value" || key === "checked" || key === "selected" || key === "disabled") {
      el[key] = value;
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  return el;
}

/** h("button", {class: "primary", onclick}, "Save") */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs instanceof Node || typeof attrs !== "object" || Array.isArray(attrs)) {
    children.unshift(attrs);
    attrs = null;
  }
  apply(el, attrs);
  append(el, children);
  return el;
}

export function svg(tag, attrs, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2).toLowerCase(), value);
    } else {
      el.setAttribute(key, String(value));
    }
  }
  append(el, children);
  return el;
}

/** el.append(), but null, undefined and booleans add nothing (as in h()). */
export function add(el, ...children) {
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function replace(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

let uid = 0;
/** A unique id for label/aria wiring. */
export function nextId(prefix = "e") {
  uid += 1;
  return `${prefix}-${uid}`;
}
