// GS1 assistance for the data of a GS1-128 or GS1 DataMatrix: the element string in
// `(AI)value` notation taken apart, each application identifier named with what it must hold
// (GS1 General Specifications, the AI table), check digits and dates checked as one types, and
// an AI added from the list. The service has the last word: zint refuses what GS1 refuses, and
// preflight reports it as `label.barcode_invalid`.

import { h, nextId, replace } from "../lib/dom.js";
import { button, select } from "../lib/ui.js";

// ai: [title, pattern of the data, kind] — kind: "check" (mod-10 check digit last),
// "date" (YYMMDD), or nothing. AIs ending in "n" stand for the four with a decimal point 0–5.
export const AIS = {
  "00": ["SSCC (serial shipping container code)", /^\d{18}$/, "check"],
  "01": ["GTIN (trade item)", /^\d{14}$/, "check"],
  "02": ["GTIN of contained items", /^\d{14}$/, "check"],
  10: ["Batch or lot number", /^[!-~]{1,20}$/],
  11: ["Production date", /^\d{6}$/, "date"],
  12: ["Due date", /^\d{6}$/, "date"],
  13: ["Packaging date", /^\d{6}$/, "date"],
  15: ["Best before date", /^\d{6}$/, "date"],
  16: ["Sell by date", /^\d{6}$/, "date"],
  17: ["Expiration date", /^\d{6}$/, "date"],
  20: ["Internal product variant", /^\d{2}$/],
  21: ["Serial number", /^[!-~]{1,20}$/],
  22: ["Consumer product variant", /^[!-~]{1,20}$/],
  240: ["Additional product identification", /^[!-~]{1,30}$/],
  241: ["Customer part number", /^[!-~]{1,30}$/],
  250: ["Secondary serial number", /^[!-~]{1,30}$/],
  251: ["Reference to source entity", /^[!-~]{1,30}$/],
  254: ["GLN extension component", /^[!-~]{1,20}$/],
  30: ["Variable count of items", /^\d{1,8}$/],
  "310n": ["Net weight, kilograms", /^\d{6}$/],
  "311n": ["Length, metres", /^\d{6}$/],
  "312n": ["Width, metres", /^\d{6}$/],
  "313n": ["Depth or height, metres", /^\d{6}$/],
  "315n": ["Net volume, litres", /^\d{6}$/],
  "320n": ["Net weight, pounds", /^\d{6}$/],
  "330n": ["Logistic weight, kilograms", /^\d{6}$/],
  "337n": ["Kilograms per square metre", /^\d{6}$/],
  37: ["Count of trade items contained", /^\d{1,8}$/],
  "390n": ["Amount payable, local currency", /^\d{1,15}$/],
  "392n": ["Amount payable, single item", /^\d{1,15}$/],
  400: ["Customer's purchase order number", /^[!-~]{1,30}$/],
  401: ["Global identification number for consignment", /^[!-~]{1,30}$/],
  402: ["Global shipment identification number", /^\d{17}$/, "check"],
  403: ["Routing code", /^[!-~]{1,30}$/],
  410: ["Ship to / deliver to GLN", /^\d{13}$/, "check"],
  411: ["Bill to / invoice to GLN", /^\d{13}$/, "check"],
  412: ["Purchased from GLN", /^\d{13}$/, "check"],
  413: ["Ship for / forward to GLN", /^\d{13}$/, "check"],
  414: ["Identification of a physical location (GLN)", /^\d{13}$/, "check"],
  415: ["GLN of the invoicing party", /^\d{13}$/, "check"],
  420: ["Ship to postal code", /^[!-~]{1,20}$/],
  421: ["Ship to postal code with ISO country code", /^\d{3}[!-~]{1,9}$/],
  422: ["Country of origin (ISO 3166)", /^\d{3}$/],
  7003: ["Expiration date and time (YYMMDDHHMM)", /^\d{10}$/],
  8004: ["Global individual asset identifier (GIAI)", /^[!-~]{1,30}$/],
  8008: ["Date and time of production", /^\d{8,12}$/],
  8020: ["Payment slip reference number", /^[!-~]{1,25}$/],
  90: ["Information agreed between partners", /^[!-~]{1,30}$/],
  91: ["Company internal information", /^[!-~]{1,90}$/],
  92: ["Company internal information", /^[!-~]{1,90}$/],
};

/** The AI table entry for an AI as written ("3102" finds "310n"). */
export function aiEntry(ai) {
  if (AIS[ai]) return AIS[ai];
  if (ai.length === 4 && AIS[`${ai.slice(0, 3)}n`] && /^[0-5]$/.test(ai[3])) return AIS[`${ai.slice(0, 3)}n`];
  if (/^9[3-9]$/.test(ai)) return ["Company internal information", /^[!-~]{1,90}$/];
  return null;
}

/** The GS1 mod-10 check digit of `digits` (the data without its check digit). */
export function checkDigit(digits) {
  let sum = 0;
  for (let i = 0; i < digits.length; i += 1) {
    // From the right: 3, 1, 3, 1, …
    sum += Number(digits[digits.length - 1 - i]) * (i % 2 === 0 ? 3 : 1);
  }
  return String((10 - (sum % 10)) % 10);
}

function validDate(yymmdd) {
  const month = Number(yymmdd.slice(2, 4));
  const day = Number(yymmdd.slice(4, 6));
  if (month < 1 || month > 12) return false;
  const days = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return day <= days; // day 00: the last day of the month, as GS1 allows
}

/** `(AI)value…` taken apart: [{ai, value, title, problem}], or {error} if it is not in that form. */
export function parseElementString(data) {
  const text = String(data || "").trim();
  if (!text) return { parts: [] };
  if (!/^(\(\d{2,4}\)[^()]+)+$/.test(text)) return { error: "Write the data as (AI)value, e.g. (01)09501101530003(17)270101." };
  const parts = [...text.matchAll(/\((\d{2,4})\)([^()]+)/g)].map(([, ai, value]) => {
    const entry = aiEntry(ai);
    let problem = null;
    if (!entry) problem = `(${ai}) is not an application identifier this assistant knows; the service checks it.`;
    else if (!entry[1].test(value)) problem = `${entry[0]}: this value does not fit the AI's format.`;
    else if (entry[2] === "check" && checkDigit(value.slice(0, -1)) !== value.slice(-1)) {
      problem = `The check digit should be ${checkDigit(value.slice(0, -1))}.`;
    } else if (entry[2] === "date" && !validDate(value)) problem = "Not a date (YYMMDD).";
    return { ai, value, title: entry ? entry[0] : "Unknown AI", problem, entry };
  });
  return { parts };
}

/** The part with its check digit put right. */
export function withCheckDigit(value) {
  return value.slice(0, -1) + checkDigit(value.slice(0, -1));
}

/**
 * The assistant under a GS1 barcode's data field. `read()` answers the data as written (or
 * null when an expression gives it, then `shown` is what it gives), `write(text)` changes it.
 */
export function gs1Assistant({ read, write, shown }) {
  const list = h("ul", { class: "dz-gs1-parts" });
  const aiChoices = select(
    Object.entries(AIS).map(([ai, [title]]) => [ai.replace("n", "2"), `(${ai.replace("n", "2")}) ${title}`]),
    { "aria-label": "Application identifier to add" },
  );
  const valueInput = h("input", { type: "text", "aria-label": "Value of the identifier to add", placeholder: "value", spellcheck: "false" });
  const id = nextId("gs1");
  const element = h(
    "section",
    { class: "dz-gs1", "aria-labelledby": id },
    h("h3", { id }, "GS1 element string"),
    list,
    h(
      "div",
      { class: "dz-gs1-add" },
      aiChoices,
      valueInput,
      button("Add AI", () => {
        const ai = aiChoices.value;
        const value = valueInput.value.trim();
        if (!value) {
          valueInput.focus();
          return;
        }
        write(`${read() || ""}(${ai})${value}`);
        valueInput.value = "";
      }),
    ),
  );
  const addRow = element.querySelector(".dz-gs1-add");
  const note = h("p", { class: "muted small" }, "Computed by the expression: change the variables it reads.");
  element.append(note);
  const refresh = () => {
    const written = read();
    addRow.hidden = written === null; // an expression's data is not written here
    note.hidden = written !== null;
    const data = written ?? shown() ?? "";
    const { parts, error } = parseElementString(data);
    if (error) {
      replace(list, h("li", { class: "bad" }, error));
      return;
    }
    replace(
      list,
      parts.map((part, index) =>
        h(
          "li",
          { class: part.problem ? "bad" : "ok" },
          h("code", `(${part.ai})`),
          " ",
          h("span", { class: "dz-gs1-title" }, part.title),
          " ",
          h("code", part.value),
          part.problem ? h("span", { class: "dz-gs1-problem" }, ` — ${part.problem}`) : null,
          part.problem && part.entry?.[2] === "check" && written !== null && part.entry[1].test(part.value)
            ? button("Correct the check digit", () => {
                const fixed = parts.map((p, i) => `(${p.ai})${i === index ? withCheckDigit(p.value) : p.value}`).join("");
                write(fixed);
              })
            : null,
        ),
      ),
    );
  };
  refresh();
  element.refresh = refresh;
  return element;
}
