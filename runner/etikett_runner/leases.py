"""Jobs in flight in this process and their queue receipts. The queue hides a claimed job for
two minutes; every report extends that, and a keeper extends jobs that have been quiet for a
while (waiting for a printer), so a job in progress is never delivered again meanwhile."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

log = logging.getLogger(__name__)

EXTEND_AFTER_SECONDS = 40.0  # well inside the queue's 120 s visibility timeout


class Lease:
    def __init__(self, job_id: str, receipt: str | None) -> None:
        self.job_id = job_id
        self._receipt = receipt
        self._lock = threading.Lock()
        self.reported_at = time.monotonic()
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

    def quiet(self, seconds: float) -> list[Lease]:
        now = time.monotonic()
        with self._lock:
            return [lease for lease in self._leases.values() if now - lease.reported_at > seconds]

    def keep(
        self,
        stop: threading.Event,
        extend: Callable[[Lease], dict[str, Any] | None],
        every: float = 5.0,
        after: float = EXTEND_AFTER_SECONDS,
    ) -> None:
        """Extend quiet jobs until `stop`."""
        while not stop.wait(every):
            for lease in self.quiet(after):
                try:
                    lease.touched(extend(lease))
                except Exception:  # a keeper that dies would let jobs be delivered twice
                    log.exception("job %s: extending its visibility failed", lease.job_id)
