// The Copilot in the designer: a person's instruction goes to the label Copilot
// (postLabelCopilot) for the saved version on screen; its proposal, laid out by the service, is
// shown on the canvas as the visual diff against the current raster (red: dots it removes, blue:
// dots it adds) with its explanation and the objects it changes. Accept saves the proposal as a
// new draft version (patchLabelDocument with its operations); reject leaves nothing behind.

import { post, request } from "../lib/api.js";
import { h, nextId, replace } from "../lib/dom.js";
import { diff } from "../lib/raster.js";
import { button, errorBox, field, loading } from "../lib/ui.js";
import { documentChanges } from "../pages/label.js";
import { layOut } from "./layout.js";

export class CopilotPanel {
  /**
   * `editor` gives: labelId, state() → {document, baseVersion, dirty, layout}, showProposal(canvas),
   * hideProposal(), accepted(answer), save().
   */
  constructor(editor) {
    this.editor = editor;
    this.instruction = h("textarea", {
      name: "instruction",
      rows: 3,
      maxlength: 4000,
      placeholder: "e.g. Add a GS1-128 with the SSCC under the address block",
    });
    this.result = h("div", { class: "dz-copilot-result", "aria-live": "polite" });
    const headingId = nextId("copilot");
    this.element = h(
      "section",
      { class: "dz-copilot", "aria-labelledby": headingId },
      h("h2", { id: headingId, class: "dz-panel-title" }, "Copilot"),
      h("p", { class: "muted small" }, "Describe a change. The proposal is shown on the canvas as a diff; nothing is saved unless you accept it, and an approver still releases it."),
      field("Instruction", this.instruction),
      h("div", { class: "actions" }, button("Propose a change", () => this.propose(), { class: "primary" })),
      this.result,
    );
    this.proposal = null;
  }

  async propose() {
    const instruction = this.instruction.value.trim();
    if (!instruction) {
      this.instruction.focus();
      replace(this.result, h("p", { class: "field-error" }, "Write what the Copilot should change."));
      return;
    }
    const state = this.editor.state();
    if (state.dirty) {
      replace(
        this.result,
        h("p", { class: "warning" }, "The Copilot works on a saved version: save your changes first."),
        button("Save now", () => this.editor.save()),
      );
      return;
    }
    this.reject(false);
    replace(this.result, loading("The Copilot is working on a proposal…"));
    try {
      const answer = await post(`/labels/${encodeURIComponent(this.editor.labelId)}/copilot`, {
        instruction,
        version: state.baseVersion,
      });
      const proposed = await layOut(answer.proposal.document);
      const current = state.layout;
      const changes = diff(current.raster, proposed.raster, "The Copilot's proposal against the label");
      this.proposal = { answer, proposed, changes };
      this.editor.showProposal(changes.canvas, proposed);
      const lines = documentChanges(state.document, answer.proposal.document);
      replace(
        this.result,
        h(
          "div",
          { class: "dz-proposal", role: "region", "aria-label": "Proposal" },
          h("p", h("strong", "Proposal: "), answer.explanation || "(no explanation)"),
          h(
            "p",
            { class: "small" },
            h("span", { class: "swatch removed" }),
            ` ${changes.removed.toLocaleString("en")} dots removed `,
            h("span", { class: "swatch added" }),
            ` ${changes.added.toLocaleString("en")} dots added`,
          ),
          lines.length ? h("ul", { class: "changes", "aria-label": "What the proposal changes" }, lines.map(([kind, text]) => h("li", { class: kind }, text))) : null,
          proposed.findings.length
            ? h("p", { class: "small" }, `Its layout has ${proposed.findings.length} finding(s): ${proposed.findings.map((f) => f.code).join(", ")}.`)
            : null,
          h(
            "div",
            { class: "actions" },
            button("Accept as a new version", () => this.accept(), { class: "primary" }),
            button("Reject", () => this.reject(true)),
          ),
        ),
      );
    } catch (error) {
      replace(this.result, errorBox(error));
    }
  }

  async accept() {
    const { answer } = this.proposal || {};
    if (!answer) return;
    const saved = await request("PATCH", `/labels/${encodeURIComponent(this.editor.labelId)}/document`, {
      json: {
        operations: answer.proposal.operations,
        base_version: answer.proposal.base_version,
        comment: `Copilot: ${this.instruction.value.trim().slice(0, 900)}`,
      },
    });
    this.proposal = null;
    this.editor.hideProposal();
    replace(this.result, h("p", { role: "status" }, `Saved as version ${saved.version} (a draft).`));
    this.instruction.value = "";
    this.editor.accepted(saved);
  }

  reject(say) {
    if (this.proposal) this.editor.hideProposal();
    this.proposal = null;
    if (say) replace(this.result, h("p", { role: "status" }, "Proposal rejected; nothing was saved."));
  }
}
