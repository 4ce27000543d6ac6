"""Durable file writes: atomic replacement (temporary file, fsync, rename, fsync of the folder),
private files (mode 0600) and appending lines that survive a power cut once the call returns."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

PRIVATE = 0o600


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable (POSIX; a no-op where folders can't be
    opened, as on Windows, whose renames are durable once MoveFileEx returns)."""
    if os.name != "posix":
        return
    descriptor = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_atomic(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Replace `path` with `data`: readers see the old or the new content, never a part."""
    temporary = path.with_name(f".{path.name}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_BINARY", 0)  # Windows: bytes
    descriptor = os.open(temporary, flags, mode)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        if os.name == "posix":
            os.chmod(temporary, mode)  # O_CREAT's mode is masked by the umask
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    fsync_dir(path.parent)


def write_private(path: Path, data: bytes) -> None:
    """Write a secret (key, enrollment secret): mode 0600 from the first byte on."""
    write_atomic(path, data, PRIVATE)


def remove(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fsync_dir(path.parent)


def append_json_line(path: Path, entry: dict[str, Any]) -> None:
    """Append `entry` as one line of a private journal, durable once this returns (the line
    fsynced, and the folder too when the file is new)."""
    created = not path.exists()
    descriptor = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, PRIVATE)
    try:
        os.write(descriptor, json.dumps(entry, sort_keys=True).encode() + b"\n")
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    if created:
        fsync_dir(path.parent)


def journal_lines(path: Path) -> list[bytes]:
    """The whole lines of a journal (none if it does not exist). A last line torn by a power
    cut was never acted on: it is cut off the file, or the next line appended would be glued to
    it and lost."""
    if not path.exists():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        write_atomic(path, data, PRIVATE)
    return data.splitlines()
