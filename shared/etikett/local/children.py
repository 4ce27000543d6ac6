"""What local mode's child processes (local AWS, the local workers) share: the first line a child
prints when it is ready, stopping it by closing its standard input, and a file kept to one child
at a time."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO


def first_line(stream: IO[str], timeout: float) -> str:
    """The first line the child prints, or "" if it prints none within `timeout` seconds."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return lines[0] if lines else ""


def stop(process: subprocess.Popen[str], timeout: float, name: str, *, left: str = "") -> None:
    """Close the child's input (it stops when it closes) and wait; killed after `timeout`
    seconds. RuntimeError, naming the child (and what it `left`), unless it exited cleanly."""
    assert process.stdin is not None
    try:
        process.stdin.close()
        process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise RuntimeError(f"{name} did not stop in time{left}") from None
    finally:
        if process.stdout is not None:
            process.stdout.close()
    if process.returncode != 0:
        raise RuntimeError(f"{name} stopped with exit status {process.returncode}")


@contextmanager
def held(path: Path, name: str, doing: str) -> Iterator[None]:
    """`path` to this process alone while the block runs (a lock file beside it): a local mode
    killed and started again at once starts a second child while the first one still finishes;
    the second waits here (saying so) rather than run beside it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(f"{name}: waiting for another to {doing} {path} …", file=sys.stderr)
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        yield  # the lock goes with the file's closing, or with the process
