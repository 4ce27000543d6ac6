"""The Runner's state directory: its identity (private key, certificate, the service CA), its
enrollment, the server URLs it was started with, the job journal, the outbox and the spool of job
bytes. One Runner process per directory (an exclusive lock)."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import IO, Any

from etikett_runner.files import remove, write_atomic, write_private

_JOB_ID = re.compile(r"[A-Za-z0-9_\-]{1,128}")


class StateLocked(RuntimeError):
    """Another Runner process uses this state directory."""


class StateDir:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.key = root / "key.pem"  # the private key: mode 0600, never leaves this folder
        self.certificate = root / "certificate.pem"
        self.ca = root / "ca.pem"  # the service CA, from the enrollment answer
        self.enrollment = root / "enrollment.json"  # id and secret (to poll while pending)
        self.settings = root / "settings.json"  # server URLs, CA file, name
        self.service = root / "service.json"  # what enrollment told: the agent channel's URL
        self.journal = root / "journal.jsonl"
        self.outbox = root / "outbox"
        self.spool = root / "spool"
        self._lock_file: IO[bytes] | None = None

    def create(self) -> None:
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.spool.mkdir(mode=0o700, exist_ok=True)

    def lock(self) -> None:
        """Hold an exclusive lock on the folder until the process ends."""
        handle = open(self.root / "runner.lock", "a+b")  # noqa: SIM115 - held until exit
        try:
            # (sys.platform, not os.name: type checkers read it, and check each side on its own)
            if sys.platform == "win32":
                import msvcrt

                handle.seek(0)
                msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
            else:
                import fcntl

                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            raise StateLocked(f"another Runner is running with {self.root}") from None
        if os.name != "nt":  # Windows refuses writes across its own byte-range lock
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n".encode())
            handle.flush()
        self._lock_file = handle

    # --- identity ---------------------------------------------------------------------------

    @property
    def enrolled(self) -> bool:
        """A certificate and its key: the Runner can talk on the agent channel."""
        return self.key.exists() and self.certificate.exists()

    def read_json(self, path: Path) -> dict[str, Any] | None:
        try:
            value = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            return None
        return value if isinstance(value, dict) else None

    def write_json(self, path: Path, value: dict[str, Any], *, private: bool = False) -> None:
        data = (json.dumps(value, indent=2, sort_keys=True) + "\n").encode()
        (write_private if private else write_atomic)(path, data)

    # --- spooled job bytes --------------------------------------------------------------------

    def spool_path(self, job_id: str) -> Path:
        if not _JOB_ID.fullmatch(job_id):
            raise ValueError(f"job id {job_id!r} cannot name a file")
        return self.spool / f"{job_id}.bin"

    def spool_write(self, job_id: str, data: bytes) -> None:
        write_private(self.spool_path(job_id), data)

    def spool_read(self, job_id: str) -> bytes | None:
        try:
            return self.spool_path(job_id).read_bytes()
        except FileNotFoundError:
            return None

    def spool_remove(self, job_id: str) -> None:
        remove(self.spool_path(job_id))
