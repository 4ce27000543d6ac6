"""One job being executed: its data, its lease, and the way it reports. `finish` writes the final
outcome to the journal before reporting it, so a job is never executed again once it ended."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
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


# How long a `sent` report waits for the job's final one to carry it: most printers confirm a
# short job within this, and one request instead of two spares the service a read, a write and
# an event batch per print. Its event keeps the time it happened (`at`).
REPORT_HOLD_SECONDS = 2.0


def message(level: str, text: str) -> dict[str, str]:
    return {"level": level, "text": text[:2000]}


def _body(
    receipt: str | None,
    status: str | None = None,
    reason: str | None = None,
    messages: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"receipt": receipt, "final": False}
    if status is not None:
        body["status"] = status
    if reason is not None:
        body["reason"] = reason
    if messages:
        body["messages"] = messages
    return body


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
    _held: dict[str, Any] | None = field(default=None, repr=False)
    _held_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
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
        body = _body(self.lease.receipt, status, reason, messages)
        if result is not None:
            body["result"] = result
        return self._send(body, durable)

    def _send(self, body: dict[str, Any], durable: bool) -> dict[str, Any] | None:
        held = self._take_held()
        if held is not None:
            if durable:
                body["earlier"] = [held]  # one request for both
            else:  # a keepalive may be dropped; the held report may not
                self._report_held(held)
        view = self.reporter.report(self.job_id, body, durable=durable)
        self.lease.touched(view)
        return view

    def report_soon(
        self,
        status: str | None = None,
        *,
        messages: list[dict[str, str]] | None = None,
        hold: float | None = None,
    ) -> None:
        """`report` a little later, so the job goes on meanwhile: held for `hold` seconds for the
        job's next report to carry (a print its printer confirms at once reports `sent` and
        `confirmed` in one request), else sent on a thread of its own. The job's next report
        goes after it, keeping the order."""
        self._settle()
        held: dict[str, Any] = {"at": datetime.now(UTC).isoformat(timespec="milliseconds")}
        if status is not None:
            held["status"] = status
        if messages:
            held["messages"] = messages
        with self._held_lock:
            self._held = held
        self._sending = threading.Timer(
            REPORT_HOLD_SECONDS if hold is None else hold, self._send_held
        )
        self._sending.daemon = True
        self._sending.start()

    def _take_held(self) -> dict[str, Any] | None:
        with self._held_lock:
            held, self._held = self._held, None
        return held

    def _send_held(self) -> None:
        held = self._take_held()
        if held is not None:  # the next report did not take it meanwhile
            self._report_held(held)

    def _report_held(self, held: dict[str, Any]) -> None:
        body = _body(self.lease.receipt, held.get("status"), None, held.get("messages"))
        self.lease.touched(self.reporter.report(self.job_id, body))

    def send_held(self) -> None:
        """Deliver a report still held back now (the job is being left: the Runner stops)."""
        self._settle()
        held = self._take_held()
        if held is not None:
            self._report_held(held)

    def _settle(self) -> None:
        """Wait for a report still on its way (only the job's own thread reports otherwise). A
        report held back and not sent yet stays held: the next report takes it along."""
        sending, self._sending = self._sending, None
        if sending is None:
            return
        if isinstance(sending, threading.Timer):
            sending.cancel()  # a no-op once it fired: then join waits for its report
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
        held = self._take_held()
        if held is not None:
            body = {**body, "earlier": [held]}
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
