// Words and numbers as people read them.

const dateTime = new Intl.DateTimeFormat("en-GB", {
  year: "numeric",
  month: "short",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
});

export function when(value) {
  if (!value) return "—";
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? String(value) : dateTime.format(date);
}

export function ago(value, now = Date.now()) {
  if (!value) return "never";
  const seconds = Math.round((now - new Date(value).getTime()) / 1000);
  if (Number.isNaN(seconds)) return String(value);
  if (seconds < 5) return "just now";
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} days ago`;
}

export function mm(size) {
  if (!size) return "";
  const dpi = size.dpi ? ` · ${size.dpi} dpi` : "";
  return `${trim(size.width_mm)} × ${trim(size.height_mm)} mm${dpi}`;
}

function trim(value) {
  return Number(value).toLocaleString("en", { maximumFractionDigits: 1 });
}

export function bytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

export function count(n, word, plural = `${word}s`) {
  return `${Number(n).toLocaleString("en")} ${n === 1 ? word : plural}`;
}

/** "person alice" / "agent label-bot" from an author or actor object. */
export function author(a) {
  if (!a) return "—";
  return `${actorKind(a.actor)} ${a.subject}`;
}

/** The API's actor as people say it: a person (session), an agent (service token), no one
 * signed in (a login attempt, a Runner's enrollment token), or the service itself (a step it
 * took on its own, such as a deployment's stage becoming active). */
export function actorKind(actor) {
  return { human: "person", service: "agent", anonymous: "anonymous", system: "system" }[actor] || String(actor || "—");
}

export function json(value) {
  return JSON.stringify(value, null, 2);
}

/** datetime-local input value → RFC 3339 UTC (or undefined). */
export function rfc3339(localValue) {
  if (!localValue) return undefined;
  const date = new Date(localValue);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString().replace(/\.\d{3}Z$/, "Z");
}
