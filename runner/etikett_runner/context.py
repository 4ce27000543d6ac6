"""One job being executed: its data, its lease, and the way it reports. `finish` writes the final
outcome to the journal before reporting it, so a job is never executed again once it ended."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from etikett_runner.download import fetch
from etikett_runner.journal import DONE, JobRecord, Journal
from etikett_runner.leases import Lease
from etikett_runner.reporter import Reporter
from etikett_runner.state import StateDir

log = logging.getLogger(__name__)

FINAL = frozenset({"confirmed", "succeeded", "failed", "cancelled"})


class JobCancelled(Exception):
    """The service cancelled the job (before its bytes reached a printer)."""


class Stopping(Exception):
    """The Runner is shutting down: leave the job as the journal has it; the next start resumes."""


def message(level: str, text: str) -> dict[str, str]:
    return {"level": level, "text": text[:2000]}


@dataclass
class JobContext:
    job_id: str
    kind: str
    payload: dict[str, Any]
    lease: Lease
    journal: Journal
    state: StateDir
    reporter: Reporter
    stop: threading.Event
    _sending: threading.Thread | None = field(default=None, repr=False)
    _deferring: bool = field(default=False, repr=False)
    _deferred: dict[str, Any] | None = field(default=None, repr=False)

    @property
    def record(self) -> JobRecord | None:
        return self.journal.get(self.job_id)

    def data(self) -> bytes | None:
        """The job's bytes: spooled at claim, or fetched now from the claim's `data_url`
        (DataUnavailable if that fails)."""
        spooled = self.state.spool_read(self.job_id)
        url = self.payload.get("data_url")
        if spooled is not None or not isinstance(url, str):
            return spooled
        data = fetch(url)
        self.state.spool_write(self.job_id, data)
        return data

    # --- reporting ------------------------------------------------------------------------------

    def report(
        self,
        status: str | None = None,
        *,
        reason: str | None = None,
        messages: list[dict[str, str]] | None = None,
        result: dict[str, Any] | None = None,
        durable: bool = True,
    ) -> dict[str, Any] | None:
        """A non-final report; answers the service's view of the job if it was delivered now."""
        self._settle()
        return self._deliver(status, reason, messages, result, durable)

    def _deliver(
        self,
        status: str | None,
        reason: str | None,
        messages: list[dict[str, str]] | None,
        result: dict[str, Any] | None,
        durable: bool,
    ) -> dict[str, Any] | None:
        body: dict[str, Any] = {"receipt": self.lease.receipt, "final": False}
        if status is not None:
            body["status"] = status
        if reason is not None:
            body["reason"] = reason
        if result is not None:
            body["result"] = result
        if messages:
            body["messages"] = messages
        view = self.reporter.report(self.job_id, body, durable=durable)
        self.lease.touched(view)
        return view

    def report_soon(
        self, status: str | None = None, *, messages: list[dict[str, str]] | None = None
    ) -> None:
        """`report` on a thread of its own, so the job goes on meanwhile (confirming while the
        `sent` report travels); the job's next report waits for it, keeping the order."""
        self._settle()
        self._sending = threading.Thread(
            target=self._deliver, args=(status, None, messages, None, True), daemon=True
        )
        self._sending.start()

    def _settle(self) -> None:
        """Wait for a report still on its way (only the job's own thread reports otherwise)."""
        sending, self._sending = self._sending, None
        if sending is not None:
            sending.join()

    def keepalive(self) -> None:
        """Extend the job's visibility and learn whether it was cancelled meanwhile."""
        self.report(durable=False)

    @contextlib.contextmanager
    def final_report_after(self) -> Iterator[None]:
        """Within the block, `finish` records the outcome in the journal but holds its report
        back until the block is left: a job leaves its printer to the next job while the
        report travels."""
        self._deferring = True
        try:
            yield
        finally:
            self._deferring = False
            body, self._deferred = self._deferred, None
            if body is not None:
                self._report_final(body)

    def finish(
        self,
        status: str,
        *,
        reason: str | None = None,
        messages: list[dict[str, str]] | None = None,
        result: dict[str, Any] | None = None,
    ) -> None:
        """The final outcome: journal first (fsynced), then the report (or the outbox)."""
        if not self._deferring:
            self._settle()
        outcome: dict[str, Any] = {"status": status, "final": True}
        if reason is not None:
            outcome["reason"] = reason
        if result is not None:
            outcome["result"] = result
        self.journal.record(self.job_id, DONE, outcome=outcome)
        self.state.spool_remove(self.job_id)
        log.info("job %s: %s%s", self.job_id, status, f" ({reason})" if reason else "")
        if status == "cancelled":
            self.journal.mark_reported(self.job_id)  # the service cancelled it: it knows
            self.report(durable=False)  # this only removes the job from the queue
            return
        body: dict[str, Any] = {**outcome, "receipt": self.lease.receipt}
        if messages:
            body["messages"] = messages
        if self._deferring:
            self._deferred = body
        else:
            self._report_final(body)

    def _report_final(self, body: dict[str, Any]) -> None:
        self._settle()  # an earlier report of this job still on its way goes first
        if self.reporter.report(self.job_id, body) is not None:
            self.journal.mark_reported(self.job_id)

    # --- waiting --------------------------------------------------------------------------------

    def check_stop(self) -> None:
        if self.stop.is_set():
            raise Stopping

    def check(self) -> None:
        if self.stop.is_set():
            raise Stopping
        if self.lease.cancelled.is_set():
            raise JobCancelled

    def wait(self, seconds: float) -> None:
        """Sleep, but wake up for shutdown (Stopping) and cancellation (JobCancelled)."""
        self.check()
        if self.stop.wait(max(seconds, 0.0)):
            raise Stopping
        self.check()
