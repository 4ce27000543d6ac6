"""Delivering job reports: straight to the service when it answers, else into the outbox, which a
background loop empties in order (with backoff) once the service is back. A job's later reports
queue behind its undelivered ones, so the service sees them in the order they were made."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from etikett_runner.backoff import Backoff
from etikett_runner.channel import AgentChannel, RunnerRemoved
from etikett_runner.connectivity import Connectivity
from etikett_runner.outbox import Outbox
from etikett_runner.transport import Refused, ServerAway

log = logging.getLogger(__name__)


class Reporter:
    def __init__(
        self,
        channel: AgentChannel,
        outbox: Outbox,
        on_removed: Callable[[RunnerRemoved], None],
        connectivity: Connectivity | None = None,
        on_final_delivered: Callable[[str], None] | None = None,
    ) -> None:
        self.channel = channel
        self.outbox = outbox
        self._on_removed = on_removed
        self._on_final_delivered = on_final_delivered
        self.connectivity = connectivity or Connectivity(threading.Event())
        self._wake = threading.Event()
        self._flush_lock = threading.Lock()

    def report(
        self, job_id: str, body: dict[str, Any], *, durable: bool = True
    ) -> dict[str, Any] | None:
        """Deliver now and return the service's view of the job, or keep it (durable) for later
        and return None. Non-durable reports (visibility extensions) are simply dropped."""
        if durable and self.outbox.has(job_id):
            self._keep(job_id, body)
            return None
        try:
            view = self.channel.report(job_id, body)
            self.connectivity.succeeded()
            return view
        except ServerAway as exc:
            self.connectivity.failed()
            if durable:
                log.warning("job %s: report kept for later (%s)", job_id, exc)
                self._keep(job_id, body)
            return None
        except RunnerRemoved as exc:
            self._on_removed(exc)
            return None
        except Refused as exc:
            log.warning("job %s: the service refused a report: %s", job_id, exc)
            return None

    def _keep(self, job_id: str, body: dict[str, Any]) -> None:
        self.outbox.put(job_id, body)
        self._wake.set()

    def flush(self) -> bool:
        """Deliver what the outbox holds, oldest first; False if the service is away."""
        with self._flush_lock:
            for item in self.outbox.pending():
                try:
                    self.channel.report(item.job_id, item.body)
                    self.connectivity.succeeded()
                except ServerAway:
                    self.connectivity.failed()
                    return False
                except RunnerRemoved as exc:
                    self._on_removed(exc)
                    return False
                except Refused as exc:
                    # e.g. 409 job.finished for a stale non-final report: it can never land.
                    log.warning("job %s: kept report refused, dropped: %s", item.job_id, exc)
                else:
                    log.info("job %s: kept report delivered", item.job_id)
                    if item.body.get("final") and self._on_final_delivered is not None:
                        self._on_final_delivered(item.job_id)
                self.outbox.remove(item)
            return True

    def run(self, stop: threading.Event) -> None:
        """Empty the outbox whenever it has something, backing off while the service is away."""
        backoff = Backoff(base=1.0, cap=60.0)
        while not stop.is_set():
            if len(self.outbox) == 0:
                self._wake.wait(timeout=5.0)
                self._wake.clear()
                continue
            if self.flush():
                backoff.reset()
            else:
                self.connectivity.pause(backoff.next())

    def wake(self) -> None:
        self._wake.set()
