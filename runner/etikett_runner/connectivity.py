"""Whether the service answers. Loops that back off while it is away (claims, kept reports) are
woken as soon as any call gets through again, instead of sleeping out a long backoff."""

from __future__ import annotations

import logging
import threading
import time

log = logging.getLogger(__name__)


class Connectivity:
    def __init__(self, stop: threading.Event) -> None:
        self._stop = stop
        self._changed = threading.Condition()
        self._down_since: float | None = None
        self._generation = 0  # counts recoveries

    @property
    def down(self) -> bool:
        with self._changed:
            return self._down_since is not None

    @property
    def away_seconds(self) -> float:
        """How long since the service last answered, as far as this process knows (0 while
        it answers)."""
        with self._changed:
            since = self._down_since
        return 0.0 if since is None else time.monotonic() - since

    def away_since_start(self, seconds: float) -> None:
        """A process started without the service: it has been away `seconds` already (since
        an earlier process last reached it), so offline bounds count from then, not now."""
        with self._changed:
            if self._down_since is None:
                self._down_since = time.monotonic() - max(0.0, seconds)

    def failed(self) -> bool:
        """Note a failed call; True if the service was answering until now (log that once)."""
        with self._changed:
            if self._down_since is not None:
                return False
            self._down_since = time.monotonic()
            return True

    def succeeded(self) -> None:
        with self._changed:
            if self._down_since is None:
                return
            away = time.monotonic() - self._down_since
            self._down_since = None
            self._generation += 1
            self._changed.notify_all()
        log.info("the service answers again (away for %.0f s)", away)

    def pause(self, seconds: float) -> None:
        """Sleep up to `seconds`; return early on stop or when the service is back."""
        deadline = time.monotonic() + seconds
        with self._changed:
            generation = self._generation
            while not self._stop.is_set() and self._generation == generation:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._changed.wait(min(left, 0.25))  # 0.25: notice `stop` promptly
