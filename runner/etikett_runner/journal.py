"""The local job journal: what this Runner did with each job, so that a job is executed at most
once even when the queue delivers it again, and a job in flight survives a crash.

An append-only file of JSON lines, fsynced after each line. A job's states, in order:
  claimed  the job and its receipt (its bytes are spooled next to the journal);
  started  about to send; the printer's odometer before sending;
  sent     all bytes were written to the printer;
  done     the final outcome (the report that was, or is to be, delivered);
and, once the service has that final report, a `reported` mark. The newest line of a job wins; a
line cut off by a crash is ignored. The file is rewritten with one line per job at start and
every `compact_every` lines: unfinished jobs always stay, finished ones until `keep_done` seconds
(`keep_reported` once the service has their outcome: it drops redeliveries of finished jobs
itself).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from etikett_runner.files import write_atomic

log = logging.getLogger(__name__)

CLAIMED, STARTED, SENT, DONE = "claimed", "started", "sent", "done"
STATES = (CLAIMED, STARTED, SENT, DONE)
KEEP_DONE_SECONDS = 15 * 24 * 3600  # longer than a message can stay in the job queue (14 days)
KEEP_REPORTED_SECONDS = 2 * 24 * 3600
COMPACT_EVERY = 20_000  # lines


@dataclass(frozen=True)
class JobRecord:
    job_id: str
    state: str
    kind: str | None = None
    receipt: str | None = None
    payload: dict[str, Any] = field(default_factory=dict)
    odometer: int | None = None  # the printer's counter before sending
    expected: int | None = None  # labels the job prints
    outcome: dict[str, Any] | None = None  # the final report, without its receipt
    reported: bool = False  # the service has the final report
    at: float = 0.0

    @property
    def finished(self) -> bool:
        return self.state == DONE

    def slim(self) -> JobRecord:
        """What a finished job needs: its outcome (the payload is of no use any more)."""
        return replace(self, payload={}) if self.finished else self


class Journal:
    def __init__(
        self,
        path: Path,
        keep_done: float = KEEP_DONE_SECONDS,
        keep_reported: float = KEEP_REPORTED_SECONDS,
        compact_every: int = COMPACT_EVERY,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.path = path
        self._clock = clock
        self._keep_done = keep_done
        self._keep_reported = keep_reported
        self._compact_every = compact_every
        self._lock = threading.Lock()
        self._jobs: dict[str, JobRecord] = {}
        self._appended = 0
        self._load()
        self._handle: IO[bytes] = self._compact()

    # --- reading -------------------------------------------------------------------------

    def get(self, job_id: str) -> JobRecord | None:
        with self._lock:
            return self._jobs.get(job_id)

    def unfinished(self) -> list[JobRecord]:
        """Jobs claimed but not done, oldest first: to resume after a restart."""
        with self._lock:
            pending = [r for r in self._jobs.values() if not r.finished]
        return sorted(pending, key=lambda r: r.at)

    def unreported(self) -> list[JobRecord]:
        """Finished jobs whose final report the service may not have."""
        with self._lock:
            return sorted(
                (r for r in self._jobs.values() if r.finished and not r.reported),
                key=lambda r: r.at,
            )

    def __len__(self) -> int:
        with self._lock:
            return len(self._jobs)

    # --- writing -------------------------------------------------------------------------

    def record(self, job_id: str, state: str, **fields: Any) -> JobRecord:
        """Append the job's new state (with changed fields) and return the merged record."""
        if state not in STATES:
            raise ValueError(f"unknown journal state {state!r}")
        with self._lock:
            before = self._jobs.get(job_id) or JobRecord(job_id=job_id, state=state)
            record = replace(before, state=state, at=self._clock(), **fields).slim()
            self._append({"job_id": job_id, "state": state, "at": record.at, **fields})
            self._jobs[job_id] = record
            self._maybe_compact()
            return record

    def note_receipt(self, job_id: str, receipt: str) -> None:
        """A job delivered again while in flight: later reports use the newest receipt."""
        with self._lock:
            before = self._jobs.get(job_id)
            if before is None or before.finished or before.receipt == receipt:
                return
            self._append({"job_id": job_id, "receipt": receipt})
            self._jobs[job_id] = replace(before, receipt=receipt)
            self._maybe_compact()

    def mark_reported(self, job_id: str) -> None:
        """The service has the job's final outcome."""
        with self._lock:
            before = self._jobs.get(job_id)
            if before is None or not before.finished or before.reported:
                return
            self._append({"job_id": job_id, "reported": True})
            self._jobs[job_id] = replace(before, reported=True)
            self._maybe_compact()

    def close(self) -> None:
        with self._lock:
            self._handle.close()

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def _append(self, line: dict[str, Any]) -> None:
        self._handle.write(json.dumps(line, separators=(",", ":")).encode() + b"\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())
        self._appended += 1

    def _maybe_compact(self) -> None:
        """After the in-memory state has the line just appended (else the rewrite loses it)."""
        if self._appended >= self._compact_every:
            self._handle.close()
            self._handle = self._compact()

    # --- loading and compaction ------------------------------------------------------------

    def _load(self) -> None:
        if not self.path.exists():
            return
        raw = self.path.read_bytes()
        lines = raw.split(b"\n")
        if raw and not raw.endswith(b"\n"):
            log.warning("journal: ignoring a line cut off by a crash: %r", lines[-1][:80])
        for number, text in enumerate(lines[:-1], 1):
            try:
                self._apply(json.loads(text))
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                log.warning("journal line %d unreadable (%s); ignored", number, exc)

    def _apply(self, line: dict[str, Any]) -> None:
        job_id = str(line.pop("job_id"))
        before = self._jobs.get(job_id)
        state = line.pop("state", None)
        known = set(JobRecord.__dataclass_fields__) - {"job_id", "state"}
        fields = {k: v for k, v in line.items() if k in known}
        if state is None:  # a receipt update or the `reported` mark
            if before is not None:
                self._jobs[job_id] = replace(before, **fields)
            return
        base = before or JobRecord(job_id=job_id, state=state)
        self._jobs[job_id] = replace(base, state=state, **fields).slim()

    def _compact(self) -> IO[bytes]:
        """Rewrite the file with one line per job worth keeping; the handle to append to."""
        now = self._clock()
        self._jobs = {
            job_id: record
            for job_id, record in self._jobs.items()
            if not record.finished
            or now - record.at < (self._keep_reported if record.reported else self._keep_done)
        }
        lines = [
            json.dumps(asdict(record), separators=(",", ":")).encode() + b"\n"
            for record in sorted(self._jobs.values(), key=lambda r: r.at)
        ]
        write_atomic(self.path, b"".join(lines), 0o600)
        self._appended = 0
        return open(self.path, "ab")  # kept open for appending until the next compaction
