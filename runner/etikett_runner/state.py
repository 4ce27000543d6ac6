"""The Runner's state directory: its identity (private key, certificate, the service CA), its
enrollment, the server URLs it was started with, the job journal, the outbox and the spool of job
bytes. One Runner process per directory (an exclusive lock). On POSIX it belongs to the Runner's
user alone: mode 0700 (an existing one is tightened), and the Runner does not start with one
that another user owns or could have put something into (on Windows the installer's ACL
does this: install.ps1)."""

from __future__ import annotations

import json
import logging
import os
import re
import stat
import sys
from pathlib import Path
from typing import IO, Any

from etikett_runner.files import remove, write_atomic, write_private

_JOB_ID = re.compile(r"[A-Za-z0-9_\-]{1,128}")
# Subfolders the Runner writes (the data folder is the flows'); bundles: signed deployments.
_SUBFOLDERS = frozenset({"outbox", "spool", "flow-runs", "bundles"})

log = logging.getLogger(__name__)


def _user(uid: int) -> str:
    try:
        import pwd

        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except (ImportError, KeyError):
        return f"uid {uid}"


class StateLocked(RuntimeError):
    """Another Runner process uses this state directory."""


class StateRefused(RuntimeError):
    """The state directory is not this Runner's alone; the message says why."""


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
        """Make the folder (mode 0700), or take an existing one that is this user's alone."""
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.secure()
        self.spool.mkdir(mode=0o700, exist_ok=True)

    def secure(self) -> None:
        """StateRefused unless the folder, and everything in it and its subfolders, belongs to
        this user and is no link; a folder others could enter is tightened to 0700 first."""
        if sys.platform == "win32":
            return  # the installer's ACL (install.ps1)
        user = os.geteuid()
        info = os.lstat(self.root)
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
            raise StateRefused(f"the state directory {self.root} is not a folder")
        if info.st_uid != user:
            raise StateRefused(
                f"the state directory {self.root} belongs to {_user(info.st_uid)}, not to "
                f"{_user(user)} who runs this Runner: its owner could read or replace the "
                "Runner's key. Give it to this user (chown) or choose another --state-dir"
            )
        mode = stat.S_IMODE(info.st_mode)
        if mode & 0o077:
            os.chmod(self.root, 0o700)
            log.warning("the state directory %s was mode %o: tightened to 0700", self.root, mode)
        for path in self._contents():
            inner = os.lstat(path)
            if inner.st_uid != user or stat.S_ISLNK(inner.st_mode):
                what = "a symbolic link" if stat.S_ISLNK(inner.st_mode) else "owned by"
                owner = "" if stat.S_ISLNK(inner.st_mode) else f" {_user(inner.st_uid)}"
                raise StateRefused(
                    f"{path} in the state directory is {what}{owner}: someone else could have "
                    "put it there while the folder was open to others. Remove it (or the state "
                    "directory, and enroll again)"
                )

    def _contents(self) -> list[Path]:
        """What the folder holds, and what its own subfolders hold."""
        found = []
        for path in self.root.iterdir():
            found.append(path)
            if path.name in _SUBFOLDERS and path.is_dir() and not path.is_symlink():
                found.extend(path.iterdir())
        return found

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
