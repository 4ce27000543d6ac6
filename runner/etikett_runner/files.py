"""Durable file writes: atomic replacement (temporary file, fsync, rename, fsync of the folder),
private files (mode 0600) and appending lines that survive a power cut once the call returns."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

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
