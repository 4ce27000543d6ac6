// One job, live until it ends: a print, a raw job or a discovery.

import { ROOT } from "../app.js";
import { get } from "../lib/api.js";
import { add, h, replace } from "../lib/dom.js";
import { when } from "../lib/format.js";
import { jobView } from "../lib/jobview.js";
import { offlineMark, pageHeader, pre, section } from "../lib/ui.js";

export async function render(main, { id }) {
  const job = await get(`/jobs/${id}`);
  const view = jobView(id);
  const result = h("div");
  add(main, 
    pageHeader(`Job ${id}`, {
      crumbs: [[`${ROOT}/runners/${job.runner_id}`, "Runner"]],
      subtitle: `${job.kind} on Runner ${job.runner_id}${job.printer_id ? `, printer ${job.printer_id}` : ""}`,
    }),
    job.printed_offline ? h("p", "Printed on site while the service was away, at ", when(job.printed_at), ".", offlineMark(job)) : "",
    section("Status and messages", view.el),
    result,
  );
  view.done.then((final) => {
    if (final.result) replace(result, section("Result", pre(final.result)));
  });
  return () => view.stop();
}
