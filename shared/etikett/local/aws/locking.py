"""A reader/writer lock for the requests to local AWS and the snapshots of its state.

moto has no request lock of its own: a snapshot taken during a request fails or catches a
half-done write, and concurrent requests race each other (a TransactWriteItems deep-copies the
whole table, and fails with "dictionary changed size during iteration" if another request
writes to it meanwhile). So read-only requests share this lock, and state-changing requests and
snapshots take it exclusively.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

__all__ = ["ReadWriteLock"]


class ReadWriteLock:
    """Writer-preferring reader/writer lock; both sides can give up after a timeout."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0

    @contextlib.contextmanager
    def shared(self, timeout: float | None) -> Iterator[bool]:
        with self._cond:
            # Waiting writers go first, or a steady stream of reads would starve them.
            acquired = self._wait(lambda: self._writer or self._writers_waiting > 0, timeout)
            if acquired:
                self._readers += 1
        try:
            yield acquired
        finally:
            if acquired:
                with self._cond:
                    self._readers -= 1
                    if not self._readers:
                        self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self, timeout: float | None) -> Iterator[bool]:
        with self._cond:
            self._writers_waiting += 1
            try:
                acquired = self._wait(lambda: self._writer or self._readers > 0, timeout)
                self._writer = acquired
            finally:
                self._writers_waiting -= 1
                if not self._writers_waiting:
                    # Readers held back for waiting writers may go once none are left waiting.
                    self._cond.notify_all()
        try:
            yield acquired
        finally:
            if acquired:
                with self._cond:
                    self._writer = False
                    self._cond.notify_all()

    def _wait(self, blocked: Callable[[], bool], timeout: float | None) -> bool:
        """With the condition held: wait until not `blocked()`; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while blocked():
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            self._cond.wait(remaining)
        return True
