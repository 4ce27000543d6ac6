// Lint as the flow is edited: the editor's unsaved document goes to postFlowLint a moment after
// each change (an older answer never overwrites a newer one), and the findings come back as a
// list of problems — each leading to its node, and one click from the AI helper's explanation
// (aiLintErklaerung) when a language model is set up.

import { ApiError, post } from "./api.js";
import { h, replace } from "./dom.js";
import { can } from "./session.js";
import { badge, button, pre } from "./ui.js";

const PAUSE_MS = 300;

/**
 * `flowId`; `onFindings({findings, record_fields}, document)` with each answer, or with a
 * malformed document's errors as findings. `schedule(document, scope)` lints after a pause.
 */
export function liveLint(flowId, onFindings) {
  let timer = null;
  let controller = null;
  let serial = 0;
  async function run(document, scope) {
    controller?.abort();
    controller = new AbortController();
    const mine = (serial += 1);
    try {
      const answer = await post(`/flows/${flowId}/lint`, { document, scope }, { signal: controller.signal });
      if (mine === serial) onFindings(answer, document);
    } catch (error) {
      if (error.name === "AbortError" || mine !== serial) return;
      // A document the service cannot read at all: its errors are the findings.
      const errors = error instanceof ApiError ? error.params?.errors || [] : [];
      const findings = errors.length
        ? errors.map((e) => ({ code: error.code, severity: "error", path: e.path || "", message: e.message, params: {} }))
        : [{ code: error.code || "lint.failed", severity: "error", path: "", message: error.message, params: {} }];
      onFindings({ findings, record_fields: null }, document);
    }
  }
  return {
    schedule(document, scope) {
      window.clearTimeout(timer);
      timer = window.setTimeout(() => run(document, scope), PAUSE_MS);
    },
    now: run,
    stop() {
      window.clearTimeout(timer);
      controller?.abort();
    },
  };
}

let noModel = false; // the service said no language model is set up: stop offering

/**
 * The problems list in `host`: `show(findings, document)` draws them; `onChoose(finding)`
 * takes the person to the node. `explainContext()` → {target, document} for the AI helper.
 */
export function problemsList(host, { onChoose, explainContext, onApply }) {
  const list = h("ul", { class: "fe-problems" });
  host.append(list);
  const canExplain = () => !noModel && can("designer", "operator");

  function explainButton(finding) {
    const out = h("div", { class: "fe-explanation", "aria-live": "polite", hidden: true });
    const action = button("Explain", async () => {
      out.hidden = false;
      replace(out, h("p", { class: "loading" }, "Asking the AI helper…"));
      try {
        const { target, document } = explainContext();
        const answer = await post("/ai/lint-erklaerung", { target, document, finding });
        replace(
          out,
          h("p", answer.explanation),
          answer.suggested_operations.length
            ? [
                h("details", h("summary", `Suggested change (${answer.suggested_operations.length} operations)`), pre(answer.suggested_operations)),
                onApply ? button("Apply the suggestion", () => onApply(answer.suggested_operations)) : null,
              ]
            : null,
          h("p", { class: "muted small" }, `Model: ${answer.model}. The suggestion is not saved until you save a version.`),
        );
      } catch (error) {
        if (error instanceof ApiError && error.code === "ai.no_credential") {
          noModel = true;
          replace(out, h("p", "No language model is set up. An administrator adds one under Administration › Credentials."));
          for (const other of list.querySelectorAll("button.fe-explain")) if (other !== action) other.remove();
          return;
        }
        replace(out, h("p", { class: "msg error" }, `${error.message} (${error.code})`));
      }
    }, { class: "fe-explain", "aria-label": `Explain ${finding.code}${finding.node_id ? ` on ${finding.node_id}` : ""}` });
    return { action, out };
  }

  return {
    show(findings) {
      if (!findings.length) {
        replace(list, h("li", { class: "empty" }, "No problems: lint finds nothing in the flow as it is now."));
        return;
      }
      const sorted = [...findings].sort((a, b) => (a.severity === b.severity ? 0 : a.severity === "error" ? -1 : 1));
      replace(
        list,
        sorted.map((finding) => {
          const row = h("li", { class: "fe-problem", "data-code": finding.code, "data-node": finding.node_id || "" });
          const go = finding.node_id
            ? button(finding.node_id, () => onChoose(finding), { class: "link-like", "aria-label": `Show node ${finding.node_id}` })
            : h("span", { class: "muted" }, "the flow");
          const explain = canExplain() ? explainButton(finding) : null;
          row.append(
            h("span", badge(finding.severity)),
            h("span", h("code", finding.code)),
            h("span", go, " ", finding.message),
            h("span", { class: "actions" }, explain?.action),
          );
          if (explain) row.append(explain.out);
          return row;
        }),
      );
    },
  };
}
