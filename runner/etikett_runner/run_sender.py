"""Sending flow runs to the service, exactly once: one sender thread, oldest run first, sends
each print request through the service's print path (its idempotency key is the run id and the
request's number, so a request sent again answers the first job and prints nothing more), prints
a batch on site where the service cannot have received it and the deployment allows it
(`offline_printing`), reports the run, moves the event's file to `done/` or `failed/` and
forgets the run (`flow_runs` holds the runs and their journal)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from etikett_runner.backoff import Backoff
from etikett_runner.channel import AgentChannel, RunnerRemoved
from etikett_runner.connectivity import Connectivity
from etikett_runner.flow_runs import (
    MAX_ATTEMPTS,
    Batch,
    PendingRun,
    RunJournal,
    finish_file,
)
from etikett_runner.roots import AllowedRoots, PathRefused
from etikett_runner.transport import Refused, ServerAway

if TYPE_CHECKING:
    from etikett_runner.offline_printing import OfflinePrinter

log = logging.getLogger(__name__)


class RunSender:
    """Delivers journaled runs, oldest first, backing off while the service is away."""

    def __init__(
        self,
        channel: AgentChannel,
        journal: RunJournal,
        connectivity: Connectivity,
        on_removed: Callable[[RunnerRemoved], None],
        roots: AllowedRoots,
        offline: OfflinePrinter | None = None,
        on_delivered: Callable[[], None] | None = None,
    ) -> None:
        self.channel = channel
        self.journal = journal
        self.roots = roots
        self.connectivity = connectivity
        self.offline = offline  # prints on site while the service is away, if allowed
        self._on_removed = on_removed
        self._on_delivered = on_delivered
        self._queue: list[PendingRun] = []
        self._claimed: set[str] = set()  # files in processing/ that a journaled run owns
        self._changed = threading.Condition()
        self._submitted = 0
        self._fresh: set[tuple[str, str]] = set()  # batches submitted here, never requested
        self._away = Backoff(base=0.5, cap=30.0)
        self._retry_at = 0.0  # while the service is away, it is asked again from then on
        self.delivered = 0

    def load(self) -> int:
        """The runs left by an earlier process (call before any trigger starts)."""
        runs = self.journal.pending()
        for run in runs:  # prints begun offline are settled by their journal, first thing
            if self.offline is not None and any(
                [self.offline.settled_before(run, b) for b in run.batches if not b.settled]
            ):
                self.journal.save(run)
        with self._changed:
            for run in runs:
                self._queue.append(run)
                if run.file is not None:
                    self._claimed.add(run.file.claimed)
        if runs:
            log.info("%d flow run(s) from before the restart to deliver", len(runs))
        return len(runs)

    def owns(self, claimed: Path) -> bool:
        with self._changed:
            return str(claimed) in self._claimed

    def submit(self, run: PendingRun) -> None:
        """Journal the run (durably), then queue it for delivery."""
        for batch in run.batches:
            batch.at_service = True  # its request goes out next: journaled as such, at no cost
        self.journal.save(run)
        with self._changed:
            self._fresh.update((run.id, b.key) for b in run.batches)
            self._queue.append(run)
            if run.file is not None:
                self._claimed.add(run.file.claimed)
            self._submitted += 1
            self._changed.notify_all()

    def waiting(self) -> int:
        with self._changed:
            return len(self._queue)

    def run(self, stop: threading.Event) -> None:
        """Oldest run first. A run whose prints are done (printed offline) while its report
        waits for the service lets the next runs print; a print that waits holds the ones
        after it."""
        backoff = Backoff(base=0.5, cap=30.0)
        while not stop.is_set():
            with self._changed:
                if not self._queue:
                    self._changed.wait(0.5)
                    continue
                queue, seen = list(self._queue), self._submitted
            waiting = False
            for run in queue:
                try:
                    done = self.deliver(run, stop)
                except RunnerRemoved as removed:
                    self._on_removed(removed)
                    return
                if not done:
                    waiting = True
                    if all(b.settled for b in run.batches):
                        continue  # only its report waits
                    break
                with self._changed:
                    self._queue.remove(run)
                    if run.file is not None:
                        self._claimed.discard(run.file.claimed)
                    self._fresh.difference_update((run.id, b.key) for b in run.batches)
                self.delivered += 1
                backoff.reset()
                if self._on_delivered is not None:
                    self._on_delivered()
            if waiting:
                self._idle(backoff.next(), seen, stop)

    def _idle(self, seconds: float, seen: int, stop: threading.Event) -> None:
        """Wait `seconds`, or until the service answers again or a new run comes (which may
        print offline meanwhile)."""
        was_down = self.connectivity.down
        deadline = time.monotonic() + seconds
        with self._changed:
            while not stop.is_set() and self._submitted == seen:
                if was_down and not self.connectivity.down:
                    return
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._changed.wait(min(left, 0.25))  # 0.25: notice `stop` and the service

    def _service_due(self) -> bool:
        """False while the service is known away and not yet due to be asked again."""
        return not self.connectivity.down or time.monotonic() >= self._retry_at

    def _service_away(self, away: ServerAway, what: str, run: PendingRun) -> None:
        self.connectivity.failed()
        self._retry_at = time.monotonic() + self._away.next()
        log.warning("flow run %s: the service is away for its %s (%s)", run.id, what, away)

    def _service_answered(self) -> None:
        self.connectivity.succeeded()
        self._away.reset()
        self._retry_at = 0.0

    def _print_offline(self, run: PendingRun, batch: Batch) -> bool:
        """Print the batch on site if nothing of it can be at the service and its deployment
        allows it; True once it is settled."""
        if self.offline is None:
            return False
        if batch.at_service:
            if (run.id, batch.key) not in self._fresh:
                return False  # a job may exist there: only the service can say, it waits
            batch.at_service = False  # never requested: say so before printing on site
            self.journal.save(run)
        return self.offline.print_batch(run, batch, lambda: self.journal.save(run))

    def deliver(self, run: PendingRun, stop: threading.Event) -> bool:
        """Send what is left of the run; False when the service is away (try again later).
        A print that cannot reach the service prints on site if its deployment allows it."""
        for batch in run.batches:
            while not batch.settled:
                if stop.is_set():
                    return False
                if self.offline is not None and self.offline.settled_before(run, batch):
                    pass  # printed offline before a restart: the journal says how it went
                elif not self._service_due():  # known away: print on site if allowed
                    if not self._print_offline(run, batch):
                        return False
                else:
                    sent = self._send(run, batch)
                    if sent == "away" and not self._print_offline(run, batch):
                        return False
                    if sent == "wait":
                        return False
                self.journal.save(run)
        if not self._service_due():
            return False  # the report waits for the service, asked again with backoff
        try:
            self.channel.flow_run(run.report())
            self._service_answered()
        except ServerAway as away:
            self._service_away(away, "report", run)
            return False
        except RunnerRemoved:
            raise
        except Refused as refused:
            log.error("flow run %s: the service refused its report: %s", run.id, refused)
        outcome = run.outcome
        if run.file is not None:
            try:
                moved = finish_file(
                    run.file, run.reason() if outcome == "failed" else None, self.roots
                )
            except (OSError, PathRefused) as error:
                log.error("flow run %s: cannot move %s: %s", run.id, run.file.claimed, error)
            else:
                if moved is not None:
                    log.info("%s → %s", run.file.name, moved)
        self.journal.forget(run.id)
        log.info(
            "flow run %s (%s, %s): %s, %d records, jobs %s",
            run.id,
            run.flow_id,
            run.source,
            outcome,
            run.records,
            ", ".join(b.job_id for b in run.batches if b.job_id) or "none",
        )
        return True

    def _send(self, run: PendingRun, batch: Batch) -> Literal["done", "wait", "away"]:
        """One attempt at one print request: done (settled, or to be sent again at once),
        wait (the same request still runs there) or away (the service did not answer)."""
        body = {
            "deployment_id": run.deployment_id,
            "printer": batch.printer,
            "label": batch.label,
            "copies": batch.copies,
            "records": batch.records,
            "idempotency_key": batch.key if not batch.attempt else f"{batch.key}:{batch.attempt}",
        }
        never_sent = (run.id, batch.key) in self._fresh or not batch.at_service
        if not batch.at_service:
            batch.at_service = True  # journaled before the request can reach the service
            self.journal.save(run)
        with self._changed:
            self._fresh.discard((run.id, batch.key))
        try:
            answer = self.channel.flow_print(body)
        except ServerAway as away:
            self._service_away(away, "print", run)
            if never_sent and not away.reached:
                batch.at_service = False  # refused before it went out: nothing is there
            return "away"
        except RunnerRemoved:
            raise
        except Refused as refused:
            self._service_answered()
            if refused.code == "print.in_progress":
                return "wait"
            named = (
                refused.params.get("errors") if refused.code == "print.variables_invalid" else None
            )
            if named and batch.attempt < MAX_ATTEMPTS:
                self._drop_named(run, batch, named)
                return "done"
            batch.error = f"{refused.code}: {refused.detail}"
            for index in batch.indexes:
                run.fail(index, None, f"print to {batch.printer!r}: {batch.error}")
            log.warning("flow run %s: print to %s refused: %s", run.id, batch.printer, refused)
            return "done"
        self._service_answered()
        batch.job_id = str(answer["job_id"])
        return "done"

    def _drop_named(self, run: PendingRun, batch: Batch, named: list[dict[str, Any]]) -> None:
        """Take the records the service named out of the request; the rest go again under the
        next key."""
        bad: dict[int, str] = {}
        for item in named:
            position = item.get("record")
            if isinstance(position, int) and 0 <= position < len(batch.records):
                text = f"{item.get('variable') or 'record'} {item.get('message') or 'invalid'}"
                bad.setdefault(position, text)
        for position, text in bad.items():
            run.fail(batch.indexes[position], None, f"print to {batch.printer!r}: {text}")
        keep = [i for i in range(len(batch.records)) if i not in bad]
        batch.records = [batch.records[i] for i in keep]
        batch.indexes = [batch.indexes[i] for i in keep]
        batch.attempt += 1
        if not batch.records or not bad:
            batch.error = "print.variables_invalid: no record of the request can print"
            for index in batch.indexes:
                run.fail(index, None, f"print to {batch.printer!r}: {batch.error}")
