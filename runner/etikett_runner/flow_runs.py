"""A run of a deployed flow on the Runner until the service has it: its batches of print
requests, the file it came from, its report, and the journal that keeps it.

The engine runs a trigger event on the site; its result — the print requests it collected, the
record count, errors, traces — is written to the state directory (`flow-runs/<run id>.json`,
atomically) before anything is sent; `run_sender.RunSender` then delivers it. A Runner killed
anywhere in between finds the run in its journal at the next start and finishes it: no label
twice, none lost, and the file is never read again."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from etikett_runner.files import remove, write_atomic
from etikett_runner.roots import AllowedRoots
from etikett_runner.site_folders import Folder
from etikett_runner.ulids import new_id

if TYPE_CHECKING:
    pass

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
