// A job, live: its status, outcome, messages and (for a print) how many labels have come out,
// polled from getJob (and the print archive) until it ends.

import { get, listAll, post } from "./api.js";
import { h, replace } from "./dom.js";
import { when } from "./format.js";
import { can } from "./session.js";
import { announce, badge, button, errorBox } from "./ui.js";

export const FINAL = new Set(["confirmed", "succeeded", "failed", "cancelled"]);
const CANCELLABLE = new Set(["rendering", "queued", "held"]);

/** {el, stop, done: Promise<job>} for job `jobId`; `onUpdate(job)` after every poll. */
export function jobView(jobId, { onUpdate, every = 1000 } = {}) {
  const status = h("div", { class: "job-status" });
  const progress = h("div", { class: "job-progress" });
  const messages = h("ol", { class: "job-messages", role: "log", "aria-live": "polite", "aria-label": "Job messages" });
  const actions = h("div", { class: "actions" });
  const el = h("div", { class: "job", dataset: { jobId } }, status, progress, messages, actions);
  let stopped = false;
  let timer = null;
  let seen = 0;
  let lastStatus = null;
  let lastShown = null;
  let resolveDone;
  const done = new Promise((resolve) => (resolveDone = resolve));

  async function archiveProgress() {
    const entries = await listAll("/print-archive", { job_id: jobId }, 10000);
    const counts = { sent: 0, confirmed: 0, failed: 0, held: 0, waiting: 0 };
    let labels = 0;
    let printed = 0;
    for (const entry of entries) {
      const key = entry.outcome && entry.outcome in counts ? entry.outcome : "waiting";
      counts[key] += 1;
      labels += entry.copies || 1;
      if (entry.outcome === "sent" || entry.outcome === "confirmed") printed += entry.copies || 1;
    }
    const text = `${printed} of ${labels} labels at the printer (${counts.confirmed} records confirmed, ${counts.sent} sent, ${counts.held} held, ${counts.failed} failed)`;
    replace(
      progress,
      h("label", { class: "progress-label" }, h("span", text), h("progress", { max: String(Math.max(labels, 1)), value: String(printed) })),
    );
  }

  async function poll() {
    if (stopped) return;
    try {
      const job = await get(`/jobs/${jobId}`);
      if (stopped) return;
      // Redraw only what changed: a redrawn link or button under the keyboard's focus would
      // take the focus with it once a second while the job waits.
      const shown = JSON.stringify([job.status, job.outcome, job.outcome_reason, job.waiting, job.attempts, job.updated_at]);
      const changed = shown !== lastShown;
      lastShown = shown;
      if (changed) replace(
        status,
        h("span", { class: "job-id" }, h("a", { href: `/console/jobs/${job.id}` }, job.id)),
        " ",
        badge(job.status),
        job.outcome ? [" outcome ", badge(job.outcome), job.outcome_reason ? ` (${job.outcome_reason})` : ""] : null,
        job.waiting ? h("span", { class: "job-waiting" }, ` · waiting: ${job.waiting}`) : null,
        h("span", { class: "muted small" }, ` · ${job.kind} · attempt ${job.attempts} · updated ${when(job.updated_at)}`),
      );
      for (const message of job.messages.slice(seen)) {
        messages.appendChild(
          h("li", { class: `msg ${message.level}` }, h("time", { datetime: message.at }, when(message.at)), " ", message.text),
        );
      }
      seen = job.messages.length;
      if (job.status !== lastStatus) {
        announce(`Job ${job.status}${job.outcome_reason ? `: ${job.outcome_reason}` : ""}`);
        lastStatus = job.status;
      }
      if (changed) replace(
        actions,
        can("operator") && CANCELLABLE.has(job.status)
          ? button("Cancel job", async () => {
              await post(`/jobs/${jobId}/cancel`);
              await poll();
            }, { class: "danger" })
          : null,
      );
      if (job.kind === "print") await archiveProgress().catch(() => {});
      onUpdate?.(job);
      if (FINAL.has(job.status)) {
        el.dataset.final = job.status;
        resolveDone(job);
        return;
      }
    } catch (error) {
      lastShown = null; // the next answer is drawn again in place of the error
      replace(status, errorBox(error));
    }
    timer = window.setTimeout(poll, every);
  }
  poll();
  return {
    el,
    done,
    stop() {
      stopped = true;
      window.clearTimeout(timer);
    },
  };
}
