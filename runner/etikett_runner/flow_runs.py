"""A run of a deployed flow, from the engine's result to the service, exactly once.

The engine runs a trigger event on the site; its result — the print requests it collected, the
record count, errors, traces — is written to the state directory (`flow-runs/<run id>.json`,
atomically) before anything is sent. Then one sender thread, oldest run first, sends each print
request through the service's print path (its idempotency key is the run id and the request's
number, so a request sent again answers the first job and prints nothing more), reports the run,
moves the event's file to `done/` or `failed/` and forgets the run. A Runner killed anywhere in
between finds the run in its journal at the next start and finishes it: no label twice, none
lost, and the file is never read again."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from etikett_runner.backoff import Backoff
from etikett_runner.channel import AgentChannel, RunnerRemoved
from etikett_runner.connectivity import Connectivity
from etikett_runner.files import remove, write_atomic
from etikett_runner.roots import AllowedRoots, PathRefused
from etikett_runner.site_folders import Folder
from etikett_runner.transport import Refused, ServerAway
from etikett_runner.ulids import new_id

if TYPE_CHECKING:
    from etikett_runner.offline_printing import OfflinePrinter

log = logging.getLogger(__name__)

RUN_ID = re.compile(r"frn_[0-9A-HJKMNP-TV-Z]{26}")
MAX_ERRORS = 100
MAX_ATTEMPTS = 20  # print requests per batch after records it named were taken out


def new_run_id() -> str:
    """`frn_` and a ULID: time-ordered, so the service lists runs newest first."""
    return new_id("frn")


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds")


@dataclass
class Batch:
    """One print request of a run. `key` is its idempotency key (the service adds the Runner's
    id); it changes only when the service named records that cannot print and they were taken
    out, so a request sent again is always the same request."""

    printer: str
    label: str
    copies: int
    records: list[dict[str, Any]]
    indexes: list[int]
    key: str
    attempt: int = 0
    job_id: str | None = None
    error: str | None = None
    # Printed on site while the service was away (offline_printing): the print's id and each
    # record's counter values, kept before the print is journaled, and how it went.
    offline_print: str | None = None
    offline_values: list[dict[str, Any]] | None = None
    offline_outcome: str | None = None  # sent | failed | unknown
    # Its print request may have reached the service (a job may exist there): then it never
    # prints offline. Journaled as True with the run, so a crash while a request is out counts.
    at_service: bool = False

    @property
    def settled(self) -> bool:
        return self.job_id is not None or self.error is not None or self.offline_outcome == "sent"


@dataclass
class EventFile:
    """The file a folder trigger took: where it waits while the run is delivered."""

    folder: str  # the watched folder
    name: str  # the file's name as it arrived
    claimed: str  # processing/<run id>.<name>


@dataclass
class PendingRun:
    id: str
    deployment_id: str
    flow_id: str
    version: int
    trigger_node: str
    source: str
    started_at: str
    records: int
    batches: list[Batch] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # record index → why it failed
    errors: list[dict[str, Any]] = field(default_factory=list)
    traces: list[Any] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    problem: str | None = None  # the event itself failed (e.g. a file that is not CSV)
    file: EventFile | None = None

    def fail(self, index: int, node_id: str | None, message: str) -> None:
        self.failed.setdefault(str(index), message)
        if len(self.errors) < MAX_ERRORS:
            self.errors.append({"record": index, "node_id": node_id, "message": message})

    @property
    def outcome(self) -> str:
        if self.problem is not None or (self.records and len(self.failed) >= self.records):
            return "failed"
        return "partial" if self.failed else "succeeded"

    def reason(self) -> str:
        """Why the run failed, for a person reading the folder."""
        if self.problem is not None:
            return self.problem
        lines = [f"{len(self.failed)} of {self.records} records failed."]
        for error in self.errors[:20]:
            node = f" in {error['node_id']}" if error.get("node_id") else ""
            lines.append(f"record {error['record']}{node}: {error['message']}")
        return "\n".join(lines)

    def report(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "deployment_id": self.deployment_id,
            "trigger": {"node_id": self.trigger_node, "source": self.source},
            "started_at": self.started_at,
            "finished_at": now(),
            "outcome": self.outcome,
            "records": self.records,
            "job_ids": [b.job_id for b in self.batches if b.job_id][:10_000],
            "trace": {
                "records": self.traces,
                "errors": self.errors,
                "log": self.messages,
                "prints": [
                    {
                        "printer": b.printer,
                        "label": b.label,
                        "copies": b.copies,
                        "records": len(b.records),
                        "job_id": b.job_id,
                        "error": b.error,
                        **({"offline_print": b.offline_print} if b.offline_outcome else {}),
                    }
                    for b in self.batches
                ],
                **({"problem": self.problem} if self.problem else {}),
            },
        }

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> PendingRun:
        batches = [Batch(**b) for b in value.pop("batches", [])]
        file = value.pop("file", None)
        return cls(**value, batches=batches, file=EventFile(**file) if file else None)


class RunJournal:
    """`flow-runs/` in the state directory: one file per run not yet delivered."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)

    def path(self, run_id: str) -> Path:
        if not RUN_ID.fullmatch(run_id):
            raise ValueError(f"run id {run_id!r} cannot name a file")
        return self.folder / f"{run_id}.json"

    def save(self, run: PendingRun) -> None:
        data = json.dumps(asdict(run), separators=(",", ":"), default=str).encode()
        write_atomic(self.path(run.id), data, 0o600)

    def forget(self, run_id: str) -> None:
        remove(self.path(run_id))

    def pending(self) -> list[PendingRun]:
        """Every run not yet delivered, oldest first (run ids are time-ordered)."""
        runs = []
        for path in sorted(self.folder.glob("frn_*.json")):
            try:
                runs.append(PendingRun.from_json(json.loads(path.read_bytes())))
            except (OSError, ValueError, TypeError) as error:
                log.error("flow run %s unreadable (%s); moved aside", path.name, error)
                path.rename(path.with_name(path.name + ".unreadable"))
        return runs


def finish_file(event: EventFile, failed_reason: str | None, roots: AllowedRoots) -> Path | None:
    """Move the claimed file to `done/` (or `failed/` with `<name>.reason.txt`); where it went,
    or None if it was moved already (a restart after the move). The folders are opened anew,
    inside the allowed roots and without following a link (PathRefused otherwise)."""
    taken = Path(event.claimed).name
    outcome = "failed" if failed_reason is not None else "done"
    what = f"the watched folder {event.folder}"
    with (
        Folder.open(event.folder, roots, what) as folder,
        folder.sub("processing", create=False) as processing,
    ):
        if not processing.exists(taken):
            return None
        with folder.sub(outcome) as where:
            target = event.name
            if where.exists(target):  # a file of the same name came before: keep both
                run_id = taken.split(".", 1)[0]
                stem, dot, suffix = event.name.partition(".")
                target = f"{stem}.{run_id}{dot}{suffix}"
            if failed_reason is not None:
                where.write(f"{target}.reason.txt", (failed_reason + "\n").encode())
            processing.move(taken, where, target)
            where.sync()
            processing.sync()
    return folder.path / outcome / target


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
