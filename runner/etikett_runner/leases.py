"""Jobs in flight in this process and their queue receipts. A job received from the queue is hidden
for 20 s (queue.RECEIVE_VISIBILITY_SECONDS); a report 5 s or more after that, or after the last
extension, hides it for the queue's two minutes. The keeper reports a job 8 s after its receipt
if nothing was reported since, and then whenever it has been quiet for a while (waiting for a
printer), so a job in progress is never delivered again meanwhile; most jobs end before the
keeper's first report, and their claim costs no queue call."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

EXTEND_AFTER_SECONDS = 40.0  # well inside the queue's 120 s visibility timeout
FIRST_EXTEND_AFTER_SECONDS = 8.0  # well inside the 20 s a job was received hidden for
KEEPER_EVERY_SECONDS = 2.0


class Lease:
    def __init__(self, job_id: str, receipt: str | None) -> None:
        self.job_id = job_id
        self._receipt = receipt
        self._lock = threading.Lock()
        self.reported_at = time.monotonic()
        self.kept = False  # extended by the keeper at least once
        self.cancelled = threading.Event()

    @property
    def receipt(self) -> str | None:
        with self._lock:
            return self._receipt

    @receipt.setter
    def receipt(self, value: str | None) -> None:
        with self._lock:
            self._receipt = value

    def touched(self, view: dict[str, Any] | None) -> None:
        """After a report: the job's visibility was extended; did the service cancel it?"""
        if view is not None:
            self.reported_at = time.monotonic()
            if view.get("status") == "cancelled":
                self.cancelled.set()


class Leases:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._leases: dict[str, Lease] = {}

    def open(self, job_id: str, receipt: str | None) -> Lease | None:
        """A new lease, or None if the job is already in flight here (its receipt is updated)."""
        with self._lock:
            existing = self._leases.get(job_id)
            if existing is not None:
                if receipt:
                    existing.receipt = receipt
                return None
            lease = self._leases[job_id] = Lease(job_id, receipt)
            return lease

    def close(self, job_id: str) -> None:
        with self._lock:
            self._leases.pop(job_id, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._leases)

    def quiet(self, seconds: float, first: float = FIRST_EXTEND_AFTER_SECONDS) -> list[Lease]:
        """Leases quiet for `seconds`, or for `first` while the keeper never extended them."""
        now = time.monotonic()
        with self._lock:
            return [
                lease
                for lease in self._leases.values()
                if now - lease.reported_at > (seconds if lease.kept else min(first, seconds))
            ]

    def keep(
        self,
        stop: threading.Event,
        extend: Callable[[Lease], dict[str, Any] | None],
        every: float = KEEPER_EVERY_SECONDS,
        after: float = EXTEND_AFTER_SECONDS,
    ) -> None:
        """Extend quiet jobs until `stop`."""
        while not stop.wait(every):
            for lease in self.quiet(after):
                try:
                    lease.touched(extend(lease))
                    lease.kept = True
                except Exception:  # a keeper that dies would let jobs be delivered twice
                    log.exception("job %s: extending its visibility failed", lease.job_id)
