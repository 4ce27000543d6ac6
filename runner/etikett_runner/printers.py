"""The printers this Runner talks to: one job at a time per printer (so the printer's counter
confirms the right job), and the status each printer last showed (for heartbeats)."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from etikett_runner.targets import Address
from etikett_runner.zebra import parse_uri


@dataclass(frozen=True)
class PrinterTarget:
    """Where a job goes: the printer of the job's payload (`{printer_id, name, uri, language,
    dpi}`) or of the Runner's configuration."""

    address: Address
    language: str
    printer_id: str | None = None
    name: str | None = None
    dpi: int | None = None

    @classmethod
    def from_payload(cls, value: Any) -> PrinterTarget:
        if not isinstance(value, dict) or not isinstance(value.get("uri"), str):
            raise ValueError("the job names no printer URI")
        dpi = value.get("dpi")
        return cls(
            address=parse_uri(value["uri"]),
            language=str(value.get("language") or "zpl").lower(),
            printer_id=str(value["printer_id"]) if value.get("printer_id") else None,
            name=str(value["name"]) if value.get("name") else None,
            dpi=int(dpi) if isinstance(dpi, int) else None,
        )

    @property
    def label(self) -> str:
        return f"{self.name} ({self.address})" if self.name else str(self.address)


@dataclass(frozen=True)
class SeenStatus:
    status: str
    at: float  # time.monotonic()


class Printers:
    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[Address, threading.Lock] = {}
        self._known: dict[str, PrinterTarget] = {}  # printer id → target (configuration, jobs)
        self._seen: dict[str, SeenStatus] = {}  # printer id → last status read

    def _lock_for(self, address: Address) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(address, threading.Lock())

    @contextmanager
    def exclusive(self, address: Address, check: Any = None, poll: float = 0.5) -> Iterator[None]:
        """Hold the printer for one job; `check()` runs while waiting (it may raise to stop)."""
        lock = self._lock_for(address)
        while not lock.acquire(timeout=poll):
            if check is not None:
                check()
        try:
            yield
        finally:
            lock.release()

    def try_exclusive(self, address: Address) -> threading.Lock | None:
        """The printer's lock if it is free now (the caller releases it), else None."""
        lock = self._lock_for(address)
        return lock if lock.acquire(blocking=False) else None

    def configure(self, targets: list[PrinterTarget]) -> None:
        with self._guard:
            self._known = {t.printer_id: t for t in targets if t.printer_id}

    def configured(self) -> list[PrinterTarget]:
        with self._guard:
            return list(self._known.values())

    def note(self, target: PrinterTarget, status: str) -> None:
        if target.printer_id:
            with self._guard:
                self._seen[target.printer_id] = SeenStatus(status, time.monotonic())

    def seen(self, printer_id: str) -> SeenStatus | None:
        with self._guard:
            return self._seen.get(printer_id)

    def statuses(self) -> list[dict[str, str]]:
        """`[{printer_id, status}]` as last read, for the heartbeat."""
        with self._guard:
            return [{"printer_id": k, "status": v.status} for k, v in self._seen.items()][:100]
