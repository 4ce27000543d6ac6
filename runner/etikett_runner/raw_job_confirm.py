"""Confirming a sent `raw` or `print` job (`raw_job`) by the printer's label counter: `confirmed`
once it advanced by the job's labels; a final `sent` where the counter can't be read, the
count is unknown, or it does not advance in time while the printer is not held."""

from __future__ import annotations

import logging
import time
from typing import TYPE_CHECKING

from etikett_runner.context import message
from etikett_runner.zebra import NoAnswer, PrinterConnection, PrinterUnreachable

if TYPE_CHECKING:
    from etikett_runner.raw_job import RawJob

log = logging.getLogger(__name__)


def confirm(job: RawJob, before: int | None) -> None:
    """Wait until the counter advanced by the job's labels: `confirmed`. Final `sent` if it
    can't be read or does not advance in time while the printer is not held."""
    if before is None or job.expected is None:
        why = "its label counter can't be read" if before is None else "its label count is unknown"
        job.ctx.finish("sent", messages=[message("info", f"Sent; not confirmed: {why}.")])
        return
    if job.expected == 0:
        job.ctx.finish("sent", messages=[message("info", "Sent; the job prints no labels.")])
        return
    goal = before + job.expected
    timeout = job.tuning.confirm_timeout(job.expected)
    deadline = time.monotonic() + timeout
    poll, next_status = 0.02, 0.0
    held_reason: str | None = None
    count: int | None = before
    conn: PrinterConnection | None = None
    try:
        while True:
            job.ctx.check_stop()  # cancelling a job that was sent is not possible
            try:
                conn = conn or job.connection().open()
                count = conn.odometer()
                if count is not None and count >= goal:
                    job.printers.note(job.target, "ready")
                    job.ctx.finish(
                        "confirmed",
                        messages=[
                            message(
                                "info",
                                f"Printed {job.expected} label(s): the printer's counter "
                                f"went from {before} to {count}.",
                            )
                        ],
                    )
                    return
                if time.monotonic() >= next_status:
                    next_status = time.monotonic() + 1.0
                    state = conn.state()
                    job.printers.note(job.target, state.status)
                    if not state.ready:
                        deadline = time.monotonic() + timeout  # held: the clock stops
                        if state.status != held_reason:
                            held_reason = state.status
                            job.ctx.report(
                                "sent",
                                reason=held_reason,
                                messages=[
                                    message(
                                        "warning",
                                        f"{job.target.label}: {state.description}; the "
                                        "labels wait in the printer.",
                                    )
                                ],
                            )
                    elif held_reason is not None:
                        held_reason = None
                        job.ctx.report("sent", messages=[message("info", "Printing resumed.")])
            except (PrinterUnreachable, NoAnswer) as exc:
                log.info("job %s: confirming: %s", job.ctx.job_id, exc)
                if conn is not None:
                    conn.close()
                conn = None
            if time.monotonic() > deadline:
                job.ctx.finish(
                    "sent",
                    messages=[
                        message(
                            "warning",
                            f"Sent, but the printer's counter did not advance by "
                            f"{job.expected} within {timeout:.0f} s (from {before}, now "
                            f"{count}); the labels may not have printed.",
                        )
                    ],
                )
                return
            if time.monotonic() - job.ctx.lease.reported_at > 30:
                job.ctx.keepalive()
            job.ctx.stop.wait(poll)
            poll = min(poll * 1.5, 1.0)
    finally:
        if conn is not None:
            conn.close()
