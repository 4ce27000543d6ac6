"""Running one job by its kind; unknown kinds fail with `unsupported_job`. Whatever happens, a job
ends with a final outcome in the journal, or stays there to be resumed (shutdown)."""

from __future__ import annotations

import logging

from etikett_runner import __version__, discovery, raw_job
from etikett_runner.context import JobCancelled, JobContext, Stopping, message
from etikett_runner.printers import Printers
from etikett_runner.tuning import Tuning

log = logging.getLogger(__name__)

# Kinds whose job is printer-language bytes for `payload.printer`: `raw` (createRunnerJob) and
# `print` (the print pipeline: labels rendered and encoded by the service).
PRINTER_BYTES = frozenset({"raw", "print"})


def execute(ctx: JobContext, printers: Printers, tuning: Tuning) -> None:
    try:
        if ctx.kind in PRINTER_BYTES:
            raw_job.execute(ctx, printers, tuning)
        elif ctx.kind == "discovery":
            discovery.execute(ctx)
        else:
            ctx.finish(
                "failed",
                reason="unsupported_job",
                messages=[
                    message(
                        "error",
                        f"This Runner (etikett-runner {__version__}) does not run "
                        f"{ctx.kind!r} jobs.",
                    )
                ],
            )
    except JobCancelled:
        ctx.finish("cancelled")
    except Stopping:
        log.info("job %s: left for the next start (shutting down)", ctx.job_id)
    except Exception as exc:
        log.exception("job %s: failed unexpectedly", ctx.job_id)
        ctx.finish(
            "failed",
            reason="runner_error",
            messages=[message("error", f"The Runner failed: {type(exc).__name__}: {exc}")],
        )
    finally:
        ctx.send_held()  # a report held back for the final one is never left behind
