"""`raw` and `print` jobs: send the job's bytes to its printer at most once, and confirm by the
printer's label counter (`raw_job_confirm`).

Before sending, the printer must be ready (`~HS`/`~HQES`): while it is out of paper, has its head
open or is paused the job is reported `held` with that reason and checked again every few seconds;
an unreachable printer is retried with backoff, then the job fails. The journal records `started`
(with the counter before sending) and `sent`. A job found `started` or `sent` after a crash is never
sent blindly again: if the counter has advanced by the job's labels it printed; if the counter has
not moved and the printer holds nothing (no formats in its buffer, no batch printing) it did not,
and the bytes are sent; otherwise the Runner waits until the printer tells which.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from etikett_engine import printer_data
from etikett_runner.backoff import Backoff
from etikett_runner.context import JobContext, message
from etikett_runner.download import DataUnavailable
from etikett_runner.journal import SENT, STARTED, JobRecord
from etikett_runner.labels import count_zpl_labels
from etikett_runner.printers import Printers, PrinterTarget
from etikett_runner.raw_job_confirm import confirm
from etikett_runner.tuning import Tuning
from etikett_runner.zebra import (
    NoAnswer,
    PrinterConnection,
    PrinterRefused,
    PrinterUnreachable,
)

log = logging.getLogger(__name__)

MAX_SEND_ATTEMPTS = 3
SETTLE_LIMIT_SECONDS = 600.0  # after a crash, wait this long (while not held) for the printer


class GaveUp(Exception):
    """The printer stayed unreachable for the whole retry budget."""


class NotReachable(Exception):
    """The job's printer is at an address or port this Runner does not connect to (`reach`)."""


@dataclass
class RawJob:
    ctx: JobContext
    target: PrinterTarget
    expected: int | None
    printers: Printers
    tuning: Tuning

    @property
    def zpl(self) -> bool:
        return self.target.language == "zpl"

    def connection(self) -> PrinterConnection:
        return PrinterConnection(
            self.target.address, self.tuning.connect_timeout, self.tuning.answer_timeout
        )

    # --- the whole job ----------------------------------------------------------------------------

    def run(self) -> None:
        # The printer is the next job's as soon as the outcome is in the journal.
        with (
            self.ctx.final_report_after(),
            self.printers.exclusive(self.target.address, check=self._waiting_for_printer),
        ):
            record = self.ctx.record
            try:
                if record is not None and record.state in (STARTED, SENT):
                    self.resume(record)
                else:
                    self.deliver()
            except GaveUp as exc:
                self.ctx.finish(
                    "failed",
                    reason="unreachable",
                    messages=[message("error", f"The printer stayed unreachable: {exc}")],
                )
            except NotReachable as exc:
                self.ctx.finish(
                    "failed",
                    reason="address_refused",
                    messages=[message("error", f"This Runner does not connect there: {exc}")],
                )

    def _waiting_for_printer(self) -> None:
        self.ctx.check()

    # --- sending ------------------------------------------------------------------------------

    def deliver(self, attempt: int = 1) -> None:
        try:
            data = self.ctx.data()
        except DataUnavailable as exc:
            self.ctx.finish("failed", reason=exc.reason, messages=[message("error", str(exc))])
            return
        if data is None:
            self.ctx.finish(
                "failed", reason="no_data", messages=[message("error", "The job has no bytes.")]
            )
            return
        # Checked again here, whatever the service let through: printer-language data only.
        refused = printer_data.refusal(data, self.target.language)
        if refused is not None:
            self.ctx.finish(
                "failed",
                reason="not_printer_data",
                messages=[message("error", f"Not {self.target.language.upper()} data: {refused}")],
            )
            return
        conn, waited = self.wait_until_ready()
        with conn:
            try:
                before = self._read_odometer(conn)
            except PrinterUnreachable as exc:  # it went away again: nothing was sent yet
                if attempt >= MAX_SEND_ATTEMPTS:
                    raise GaveUp(str(exc)) from None
                self.deliver(attempt + 1)
                return
            if waited or attempt > 1:
                # A last look at the service: a job cancelled while it waited must not print.
                # (Straight after the claim this round trip would only add latency.)
                self.ctx.report(
                    "running",
                    messages=[
                        message("info", f"Sending {len(data)} bytes to {self.target.label}.")
                    ],
                )
            self.ctx.check()
            self.ctx.journal.record(
                self.ctx.job_id, STARTED, odometer=before, expected=self.expected
            )
            try:
                conn.send(data)
            except PrinterUnreachable as exc:
                log.warning("job %s: %s", self.ctx.job_id, exc)
                if attempt >= MAX_SEND_ATTEMPTS:
                    self.ctx.finish(
                        "failed",
                        reason="send_failed",
                        messages=[message("error", f"Sending failed {attempt} times: {exc}")],
                    )
                    return
                self.ctx.report(None, messages=[message("warning", f"Sending broke off: {exc}")])
                self.settle(self.ctx.record, attempt=attempt + 1)
                return
            self.ctx.journal.record(self.ctx.job_id, SENT)
        log.info("job %s: %d bytes sent to %s", self.ctx.job_id, len(data), self.target.label)
        waiting = (
            f"; waiting for the printer's counter to confirm {self.expected} label(s)"
            if before is not None and self.expected
            else ""
        )
        self.ctx.report_soon(
            "sent", messages=[message("info", f"Sent to {self.target.label}{waiting}.")]
        )
        confirm(self, before)

    def _read_odometer(self, conn: PrinterConnection) -> int | None:
        if not self.zpl:
            return None
        try:
            return conn.odometer()
        except NoAnswer:
            return None

    def wait_until_ready(self) -> tuple[PrinterConnection, bool]:
        """An open connection to a printer that can print now, and whether the job had to wait
        for it. Reports `held` (with the reason) while it cannot print; GaveUp once it was
        unreachable for the whole budget."""
        waited = False
        unreachable_since: float | None = None
        backoff = Backoff(base=1.0, cap=8.0, floor=0.5)
        held_reason: str | None = None
        while True:
            self.ctx.check()
            conn = self.connection()
            try:
                conn.open()
                state = conn.state() if self.zpl else None
            except PrinterRefused as exc:
                conn.close()
                raise NotReachable(str(exc)) from None
            except (PrinterUnreachable, NoAnswer) as exc:
                conn.close()
                waited = True
                now = time.monotonic()
                if unreachable_since is None:
                    unreachable_since = now
                    self.ctx.report(None, messages=[message("warning", f"{exc}; trying again.")])
                self.printers.note(self.target, "unreachable")
                left = self.tuning.unreachable_seconds - (now - unreachable_since)
                if left <= 0:
                    raise GaveUp(str(exc)) from None
                self.ctx.wait(min(backoff.next(), left))
                self.ctx.keepalive()
                continue
            unreachable_since = None
            backoff.reset()
            if state is None or state.ready:
                self.printers.note(self.target, "ready")
                return conn, waited
            conn.close()
            waited = True
            self.printers.note(self.target, state.status)
            if state.status != held_reason:
                held_reason = state.status
                self.ctx.report(
                    "held",
                    reason=held_reason,
                    messages=[message("warning", f"{self.target.label}: {state.description}")],
                )
            else:
                self.ctx.keepalive()  # extends visibility; tells us if it was cancelled
            self.ctx.wait(self.tuning.held_recheck_seconds)

    # --- after a crash --------------------------------------------------------------------------

    def resume(self, record: JobRecord) -> None:
        if record.state == SENT:
            self.ctx.report(
                None,
                messages=[
                    message(
                        "info",
                        "Resumed after a restart: the bytes had reached the printer; "
                        "confirming by its label counter.",
                    )
                ],
            )
            confirm(self, record.odometer)
            return
        self.settle(record, attempt=1)

    def settle(self, record: JobRecord | None, attempt: int) -> None:
        """The bytes may or may not have reached the printer (`started`): find out from the
        printer, then confirm or send. Never sends while the printer may hold them."""
        before = record.odometer if record is not None else None
        if before is None or self.expected is None:
            self.ctx.finish(
                "failed",
                reason="outcome_unknown",
                messages=[
                    message(
                        "error",
                        "Sending was interrupted and this printer's label counter can't tell "
                        "whether the labels printed; not sent again, to avoid a duplicate. "
                        "Check the printer.",
                    )
                ],
            )
            return
        limit = time.monotonic() + SETTLE_LIMIT_SECONDS
        unreachable_since: float | None = None
        waiting_said = False
        while True:
            self.ctx.check()
            try:
                with self.connection() as conn:
                    # The state first, then the counter: labels that print between the two
                    # reads show in the counter. Read the other way round, a printer that
                    # finished its buffer in between looked idle with its counter unmoved,
                    # and the bytes were sent a second time.
                    state = conn.state()
                    count = conn.odometer()
            except (PrinterUnreachable, NoAnswer) as exc:
                now = time.monotonic()
                unreachable_since = unreachable_since or now
                if now - unreachable_since > self.tuning.unreachable_seconds:
                    raise GaveUp(f"{exc} (the labels may have printed before)") from None
                self.ctx.wait(1.0)
                continue
            unreachable_since = None
            if count is not None and count > before:  # all or some of its labels printed
                self.ctx.journal.record(self.ctx.job_id, SENT)
                self.ctx.report(
                    "sent",
                    messages=[
                        message(
                            "info",
                            f"Resumed: the printer's counter moved from {before} to {count}; "
                            "the bytes had arrived, they are not sent again.",
                        )
                    ],
                )
                confirm(self, before)
                return
            if count is not None and state.host is not None and not state.busy:
                self.ctx.report(
                    None,
                    messages=[
                        message(
                            "info",
                            f"Resumed: the printer's counter is still {count} and it holds no "
                            "labels; the bytes had not arrived. Sending them now.",
                        )
                    ],
                )
                self.deliver(attempt)  # waits (held) if the printer can't print yet
                return
            if not state.ready:
                limit = time.monotonic() + SETTLE_LIMIT_SECONDS  # held: the clock stops
            if not waiting_said:
                waiting_said = True
                self.ctx.report(
                    None,
                    messages=[
                        message(
                            "warning",
                            f"Resumed: {self.target.label} is {state.status} and holds labels "
                            "that may be this job's; waiting for it before deciding.",
                        )
                    ],
                )
            if time.monotonic() > limit:
                self.ctx.finish(
                    "failed",
                    reason="outcome_unknown",
                    messages=[
                        message(
                            "error",
                            "The printer did not show whether this job's labels printed; not "
                            "sent again, to avoid a duplicate.",
                        )
                    ],
                )
                return
            if time.monotonic() - self.ctx.lease.reported_at > 30:
                self.ctx.keepalive()
            self.ctx.wait(0.5)


def execute(ctx: JobContext, printers: Printers, tuning: Tuning) -> None:
    try:
        target = PrinterTarget.from_payload(ctx.payload.get("printer"))
    except ValueError as exc:
        ctx.finish("failed", reason="bad_printer", messages=[message("error", str(exc))])
        return
    expected = ctx.payload.get("expected_labels")
    if not isinstance(expected, int) or expected < 0:
        expected = None
        try:
            data = ctx.data()
        except DataUnavailable as exc:
            ctx.finish("failed", reason=exc.reason, messages=[message("error", str(exc))])
            return
        if data is not None and target.language == "zpl":
            expected = count_zpl_labels(data)
    RawJob(ctx, target, expected, printers, tuning).run()
