"""What local mode's child processes (local AWS, the local workers, the agent channel) share: the
first line a child prints when it is ready, stopping it by closing its standard input, and a file
kept to one child at a time."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path
from typing import IO, Any, ClassVar

# The first line of a child that cannot work, followed by why (e.g. a port that is taken).
FAILED = "FAILED"


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


class Child:
    """A child of `etikett dev` running `python -m <module>`: it reads its plan (a dataclass) as
    one JSON line on its standard input, prints `ready_line` once it works (`ready` waits for
    it), and stops when its input closes (`stop`)."""

    module: ClassVar[str]
    name: ClassVar[str]  # in errors: "local workers did not start …"
    ready_line: ClassVar[str]
    start_timeout: ClassVar[float]
    stop_timeout: ClassVar[float]

    def __init__(self) -> None:
        self._process: subprocess.Popen[str] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def start(self, plan: Any) -> None:
        """Start the child; it gets ready meanwhile (see `ready`)."""
        if self._process is not None:
            raise RuntimeError(f"{type(self).__name__} is already started")
        # The environment is `etikett dev`'s own, complete by now: endpoint, credentials, the
        # functions' variables (provision.function_environment).
        process = subprocess.Popen(
            [sys.executable, "-m", self.module],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._process = process
        assert process.stdin is not None
        process.stdin.write(json.dumps(asdict(plan)) + "\n")
        process.stdin.flush()

    def ready(self) -> None:
        """Wait until the child works; if it cannot start, say why it did not."""
        process = self._process
        if process is None or process.stdout is None:
            raise RuntimeError(f"{type(self).__name__} is not started")
        line = first_line(process.stdout, self.start_timeout).strip()
        if line != self.ready_line:
            self._process = None
            process.kill()
            process.wait()
            raise RuntimeError(self.not_started(line, process.returncode))

    def not_started(self, line: str, returncode: int | None) -> str:
        """What `ready` says: the child's own reason (`FAILED <why>`), or what it printed."""
        if line.startswith(FAILED):
            return f"{self.name} did not start: {line.removeprefix(FAILED).strip()}"
        return f"{self.name} did not start (exit {returncode}): {line!r}"

    def stop(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            stop(process, self.stop_timeout, self.name)


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


# --- the child's side ---------------------------------------------------------------------------


def leave_stopping_to_the_parent() -> None:
    """Ctrl-C and SIGTERM reach the whole process group: the parent decides when and in which
    order its children stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def ready_until_the_parent_closes(line: str) -> None:
    """Print `line` for the parent (`first_line`), then wait until the parent closes our input
    (it stops us, or it died). Nobody reads our output after that line: whatever is printed
    from now on goes where errors go, never into a pipe that could fill and stall us. Redirected
    before the line is written, so it is so once the parent has read it."""
    sys.stdout.flush()
    with os.fdopen(os.dup(sys.stdout.fileno()), "w") as pipe:
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        pipe.write(f"{line}\n")
    while sys.stdin.buffer.read(65536):
        pass
