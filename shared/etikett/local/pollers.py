"""What the local event-source pollers (SQS queues, DynamoDB streams) share: a daemon thread per
source, each polling until the pollers stop, and one stop for all of them."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

Source = TypeVar("Source")


class Pollers(Generic[Source]):
    def __init__(self) -> None:
        self.stopping = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(
        self,
        sources: Sequence[Source],
        run: Callable[[Source], None],
        name: Callable[[Source], str],
    ) -> None:
        """`run(source)` in a daemon thread of its own for each source (it returns once
        `stopping` is set)."""
        for source in sources:
            thread = threading.Thread(target=run, args=(source,), daemon=True, name=name(source))
            thread.start()
            self._threads.append(thread)

    def stop(self, timeout: float) -> bool:
        """Stop every poller, waiting up to `timeout` for each; whether all have stopped."""
        self.stopping.set()
        for thread in self._threads:
            thread.join(timeout=timeout)
        return all(not thread.is_alive() for thread in self._threads)
