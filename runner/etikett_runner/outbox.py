"""Reports the server has not acknowledged yet, kept on disk until it does: one file per report
(`<sequence>-<job id>.json`, written atomically), delivered oldest first, so no outcome is lost
when either side restarts and a job's reports arrive in the order they were made."""

from __future__ import annotations

import json
import logging
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etikett_runner.files import remove, write_atomic

log = logging.getLogger(__name__)

_NAME = re.compile(r"(?P<seq>[0-9]{16})-(?P<job>[A-Za-z0-9_\-]{1,128})\.json")


@dataclass(frozen=True)
class PendingReport:
    seq: int
    job_id: str
    body: dict[str, Any]
    path: Path


class Outbox:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._jobs: dict[str, int] = {}  # job id → reports pending
        seqs = [0]
        for item in self._scan():
            seqs.append(item.seq)
            self._jobs[item.job_id] = self._jobs.get(item.job_id, 0) + 1
        self._next = max(seqs) + 1

    def put(self, job_id: str, body: dict[str, Any]) -> PendingReport:
        if not re.fullmatch(r"[A-Za-z0-9_\-]{1,128}", job_id):
            raise ValueError(f"job id {job_id!r} cannot name a file")
        with self._lock:
            seq = self._next
            self._next += 1
            path = self.folder / f"{seq:016d}-{job_id}.json"
            write_atomic(path, json.dumps(body).encode(), 0o600)
            self._jobs[job_id] = self._jobs.get(job_id, 0) + 1
        return PendingReport(seq, job_id, body, path)

    def pending(self) -> list[PendingReport]:
        """Everything waiting, oldest first."""
        with self._lock:
            return self._scan()

    def has(self, job_id: str) -> bool:
        with self._lock:
            return self._jobs.get(job_id, 0) > 0

    def __len__(self) -> int:
        with self._lock:
            return sum(self._jobs.values())

    def remove(self, item: PendingReport) -> None:
        with self._lock:
            if not item.path.exists():
                return
            remove(item.path)
            left = self._jobs.get(item.job_id, 1) - 1
            if left > 0:
                self._jobs[item.job_id] = left
            else:
                self._jobs.pop(item.job_id, None)

    def _scan(self) -> list[PendingReport]:
        items = []
        for path in self.folder.iterdir():
            match = _NAME.fullmatch(path.name)
            if match is None:
                continue
            try:
                body = json.loads(path.read_bytes())
            except (OSError, ValueError) as exc:
                log.warning("outbox: %s unreadable (%s); moved aside", path.name, exc)
                path.rename(path.with_name(path.name + ".unreadable"))
                continue
            items.append(PendingReport(int(match["seq"]), match["job"], body, path))
        return sorted(items, key=lambda item: item.seq)
