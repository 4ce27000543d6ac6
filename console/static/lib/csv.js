// CSV files (RFC 4180: quotes, doubled quotes, line breaks in quotes), delimiter , ; or tab.

export function detectDelimiter(text) {
  const firstLine = text.split(/\r?\n/, 1)[0] || "";
  const counts = [",", ";", "\t"].map((d) => [d, firstLine.split(d).length - 1]);
  counts.sort((a, b) => b[1] - a[1]);
  return counts[0][1] > 0 ? counts[0][0] : ",";
}

/** Rows of cells. */
export function parseRows(text, delimiter = detectDelimiter(text)) {
  const rows = [];
  let row = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (c === '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c === '"' && cell === "") {
      quoted = true;
    } else if (c === delimiter) {
      row.push(cell);
      cell = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i += 1;
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
    } else {
      cell += c;
    }
  }
  if (cell !== "" || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows.filter((r) => r.length > 1 || r[0] !== "");
}

/** {columns, records}: the first row names the columns, each further row is one record. */
export function parseRecords(text) {
  const clean = text.replace(/^\uFEFF/, "");
  const rows = parseRows(clean);
  if (!rows.length) return { columns: [], records: [] };
  const columns = rows[0].map((c) => c.trim());
  const records = rows.slice(1).map((row) => Object.fromEntries(columns.map((c, i) => [c, row[i] ?? ""])));
  return { columns, records };
}

/** A cell's text as the label variable's type wants it (empty cells are left out). */
export function typed(value, type) {
  const text = String(value).trim();
  if (text === "") return undefined;
  if (type === "integer" && /^-?\d+$/.test(text)) return Number.parseInt(text, 10);
  if (type === "number" && text !== "" && !Number.isNaN(Number(text.replace(",", ".")))) return Number(text.replace(",", "."));
  if (type === "boolean") return ["true", "1", "yes", "ja", "x"].includes(text.toLowerCase());
  return text;
}
