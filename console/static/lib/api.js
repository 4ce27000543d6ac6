// The REST API, from the page's own origin. The session cookie (HttpOnly) authenticates; every
// change carries the CSRF header the API requires of cookie requests.

export const BASE = "/api/v1";
export const CSRF_HEADER = "X-Etikett-CSRF";

/** A problem answer (RFC 9457) or a transport failure. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail || problem.title || `HTTP ${status}`);
    this.status = status;
    this.code = problem.code || `http.${status}`;
    this.title = problem.title || "Request failed";
    this.params = problem.params || {};
    this.problem = problem;
  }
}

function url(path, query) {
  const target = new URL(BASE + path, window.location.origin);
  for (const [key, value] of Object.entries(query || {})) {
    if (value === undefined || value === null || value === "") continue;
    target.searchParams.set(key, String(value));
  }
  return target.pathname + target.search;
}

async function problemOf(response) {
  const type = response.headers.get("content-type") || "";
  if (type.includes("json")) {
    try {
      return await response.json();
    } catch {
      /* fall through */
    }
  }
  return { title: response.statusText || "Request failed", detail: `HTTP ${response.status}` };
}

/**
 * request("POST", "/labels", {json: {...}}) → parsed JSON (or null for 204); `body` sends a
 * FormData (an upload) instead; `upload()` builds one from a file.
 * `raw: true` answers the Response itself (previews).
 */
export async function request(method, path, { json, body, query, raw = false, signal } = {}) {
  const headers = { Accept: "application/json" };
  if (method !== "GET" && method !== "HEAD") headers[CSRF_HEADER] = "1";
  const init = { method, headers, credentials: "same-origin", signal, cache: "no-store" };
  if (json !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  } else if (body !== undefined) {
    init.body = body; // FormData: the browser writes the multipart boundary itself
  }
  let response;
  try {
    response = await fetch(url(path, query), init);
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, {
      code: "network.unreachable",
      title: "The service cannot be reached",
      detail: "The service did not answer. Check the connection and try again.",
    });
  }
  if (!response.ok) {
    const problem = await problemOf(response);
    const failure = new ApiError(response.status, problem);
    if (response.status === 401) {
      window.dispatchEvent(new CustomEvent("etikett:unauthenticated", { detail: failure }));
    }
    if (response.headers.get("retry-after")) failure.retryAfter = response.headers.get("retry-after");
    throw failure;
  }
  if (raw) return response;
  if (response.status === 204) return null;
  const type = response.headers.get("content-type") || "";
  return type.includes("json") ? response.json() : response.text();
}

export const get = (path, query, options = {}) => request("GET", path, { ...options, query });
export const post = (path, json, options = {}) => request("POST", path, { ...options, json });
export const put = (path, json, options = {}) => request("PUT", path, { ...options, json });
/** A file as the multipart field `name` (imports). */
export function upload(path, file, { name = "file", query } = {}) {
  const body = new FormData();
  body.append(name, file, file.name);
  return request("POST", path, { body, query });
}
export const patch = (path, json, options = {}) => request("PATCH", path, { ...options, json });
export const del = (path, options = {}) => request("DELETE", path, options);

/** A fresh idempotency key for one print (randomUUID needs a secure context; plain HTTP on a
 * site network is not one). */
export function newIdempotencyKey() {
  return window.crypto?.randomUUID ? window.crypto.randomUUID() : `${Date.now()}-${Math.random()}`;
}

/** Every item of a list, following cursors up to `max` items. */
export async function listAll(path, query = {}, max = 1000) {
  const items = [];
  let cursor = null;
  do {
    const page = await get(path, { ...query, limit: 200, cursor });
    items.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor && items.length < max);
  return items;
}

/** One page of a list: {items, next_cursor}. */
export function page(path, query = {}, cursor = null, limit = 50) {
  return get(path, { ...query, limit, cursor });
}

/** The print raster of a label (version or latest) as a PNG blob, with its dots and density.
 * `counters` and `samples: false` show a print as a dry run says it would come out. */
export async function preview(labelId, { version, variables = {}, counters, samples, signal } = {}) {
  const response = await request("POST", `/labels/${encodeURIComponent(labelId)}/preview`, {
    json: { variables, counters, samples },
    query: { stufe: "etikett", version },
    raw: true,
    signal,
  });
  const blob = await response.blob();
  const [width, height] = (response.headers.get("x-label-dots") || "0x0").split("x").map(Number);
  return {
    blob,
    width,
    height,
    dpi: Number(response.headers.get("x-label-dpi") || 0),
    version: Number(response.headers.get("x-label-version") || version || 0),
  };
}

/** A problem's field errors as {field: message}, whichever shape the code uses. */
export function fieldErrors(error) {
  const out = {};
  const params = (error && error.params) || {};
  for (const item of params.fields || []) {
    out[String(item.field).replace(/^body\./, "")] = item.message;
  }
  for (const item of params.errors || []) {
    const key = item.variable || item.path || item.field || "";
    if (key) out[String(key)] = item.message;
  }
  return out;
}
