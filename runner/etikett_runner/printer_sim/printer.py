"""The print engine: a buffer of received labels, the conditions that hold it, and the odometer.

Labels are printed in the order received, on a thread of their own, one copy after another. While
the printer is out of paper, out of ribbon, paused or its head is open, received labels stay in
the buffer (not printed, not counted) and print once the condition clears, as a real printer
prints its buffer after a refill or resume. The odometer counts printed copies only. Powering off
(`stop`) loses the buffer, not the odometer.
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from PIL import Image

from etikett_runner.printer_sim.formats import LabelFormat
from etikett_runner.printer_sim.output import first_free_seq, stem, write_label
from etikett_runner.printer_sim.status import StatusSnapshot

log = logging.getLogger("etikett_runner.printer_sim")


@dataclass(frozen=True)
class Conditions:
    paper_out: bool = False
    paused: bool = False
    head_open: bool = False
    ribbon_out: bool = False
    slow_seconds: float = 0.0  # time to print one copy
    unreachable: bool = False  # the TCP port refuses connections

    @property
    def hold_reason(self) -> str | None:
        """Why labels are held in the buffer, or None when the printer prints."""
        for name, reason in (
            ("head_open", "head open"),
            ("paper_out", "paper out"),
            ("ribbon_out", "ribbon out"),
            ("paused", "paused"),
        ):
            if getattr(self, name):
                return reason
        return None


CONDITION_NAMES = tuple(f.name for f in fields(Conditions))


def validate_conditions(values: Mapping[str, Any]) -> dict[str, Any]:
    """Check a condition update from outside (HTTP, CLI): known names, booleans, sane delays."""
    unknown = sorted(set(values) - set(CONDITION_NAMES))
    if unknown:
        raise ValueError(f"unknown conditions {unknown}; known: {list(CONDITION_NAMES)}")
    checked: dict[str, Any] = {}
    for name, value in values.items():
        if name == "slow_seconds":
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError("slow_seconds must be a number")
            if not 0 <= value <= 3600:
                raise ValueError("slow_seconds must be between 0 and 3600")
            checked[name] = float(value)
        elif not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false")
        else:
            checked[name] = value
    return checked


@dataclass(frozen=True)
class SimError:
    at: datetime
    kind: str  # crc, byte_count, syntax, zlib, unsupported, incomplete_format, stream, internal
    message: str
    peer: str | None = None


@dataclass(frozen=True)
class PrintedLabel:
    seq: int
    image: Image.Image  # mode "1", black = 0, exactly the dots printed
    copies: int  # copies printed (the odometer counted these)
    copies_requested: int  # ^PQ
    compression: str | None  # of its graphics: hex, acs, z64, b64, binary, mixed
    crc_ok: bool | None  # None when no graphic carried a CRC
    received_at: datetime
    printed_at: datetime
    warnings: tuple[str, ...] = ()
    png_path: Path | None = None

    @property
    def width(self) -> int:
        return self.image.width

    @property
    def height(self) -> int:
        return self.image.height

    @property
    def raster(self) -> bytes:
        """Rows padded to whole bytes, 1 = black dot: the ^GF data format."""
        return self.image.tobytes("raw", "1;I")


@dataclass
class _Job:
    seq: int
    label: LabelFormat
    image: Image.Image
    remaining: int
    printed: int = 0
    warnings: list[str] = field(default_factory=list)


class PrintEngine:
    def __init__(
        self, *, dpi: int, out_dir: Path | None, keep: int | None = None, odometer: int = 0
    ) -> None:
        self.dpi = dpi
        self.out_dir = out_dir
        self._cv = threading.Condition()
        self._conditions = Conditions()
        self._queue: deque[_Job] = deque()
        self._current: _Job | None = None
        self._odometer = odometer
        self._printed: deque[PrintedLabel] = deque(maxlen=keep)
        self._printed_total = 0
        self._errors: deque[SimError] = deque(maxlen=keep)
        self._error_total = 0
        self._next_seq = first_free_seq(out_dir)
        self._running = False
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        with self._cv:
            if self._running:
                return
            self._running = True
        self._thread = threading.Thread(target=self._run, name="printer-sim-engine", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._cv:
            self._running = False
            lost = len(self._queue) + (self._current is not None)
            self._queue.clear()
            self._current = None
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        if lost:
            log.info("power off: %d label(s) in the buffer are lost", lost)

    # --- what connections do ---------------------------------------------------------------

    def submit(self, label: LabelFormat, image: Image.Image) -> int:
        """Queue a decoded label; its sequence number names its files."""
        with self._cv:
            seq = self._next_seq
            self._next_seq += 1
            self._queue.append(_Job(seq, label, image, remaining=label.copies))
            reason = self._conditions.hold_reason
            self._cv.notify_all()
        held = f", held: {reason}" if reason else ""
        log.info(
            "label %d received: %dx%d dots, %s, %d cop%s%s",
            seq,
            image.width,
            image.height,
            label.compression or "no graphic",
            label.copies,
            "y" if label.copies == 1 else "ies",
            held,
        )
        for warning in label.warnings:
            log.warning("label %d: %s", seq, warning)
        return seq

    def record_error(self, kind: str, message: str, peer: str | None = None) -> None:
        with self._cv:
            self._errors.append(SimError(datetime.now(UTC), kind, message, peer))
            self._error_total += 1
            self._cv.notify_all()
        log.error("%s error from %s: %s", kind, peer or "?", message)

    def cancel_all(self) -> None:
        """~JA: the buffer and the rest of the batch being printed are cancelled."""
        with self._cv:
            cancelled = len(self._queue)
            self._queue.clear()
            if self._current is not None:
                self._current.remaining = 0
            self._cv.notify_all()
        log.info("~JA: cancelled %d label(s) in the buffer", cancelled)

    # --- conditions and state --------------------------------------------------------------

    @property
    def conditions(self) -> Conditions:
        with self._cv:
            return self._conditions

    def set_conditions(self, **changes: Any) -> Conditions:
        with self._cv:
            before = self._conditions
            after = self._conditions = replace(before, **changes)
            waiting = len(self._queue) + (self._current is not None)
            self._cv.notify_all()
        for name in CONDITION_NAMES:
            old, new = getattr(before, name), getattr(after, name)
            if old != new:
                log.info("condition %s: %s → %s", name, old, new)
        if before.hold_reason and not after.hold_reason and waiting:
            log.info("printing resumes: %d label(s) in the buffer", waiting)
        return after

    def snapshot(self, *, label_length: int, partial_format: bool) -> StatusSnapshot:
        with self._cv:
            c = self._conditions
            return StatusSnapshot(
                paper_out=c.paper_out,
                paused=c.paused,
                head_open=c.head_open,
                ribbon_out=c.ribbon_out,
                label_length=label_length,
                formats_in_buffer=len(self._queue),
                labels_remaining=self._current.remaining if self._current else 0,
                partial_format=partial_format,
                odometer=self._odometer,
            )

    @property
    def odometer(self) -> int:
        with self._cv:
            return self._odometer

    @property
    def printed(self) -> list[PrintedLabel]:
        with self._cv:
            return list(self._printed)

    @property
    def printed_total(self) -> int:
        with self._cv:
            return self._printed_total

    @property
    def errors(self) -> list[SimError]:
        with self._cv:
            return list(self._errors)

    @property
    def error_total(self) -> int:
        with self._cv:
            return self._error_total

    def wait(self, predicate: Callable[[], bool], timeout: float) -> bool:
        """Block until `predicate()` holds (checked whenever the engine's state changes)."""
        with self._cv:
            return self._cv.wait_for(predicate, timeout)

    # --- the engine thread -----------------------------------------------------------------

    def _ready(self) -> bool:
        current = self._current
        if current is not None and current.remaining == 0:
            return True  # a cancelled batch: finish it even while held
        return self._conditions.hold_reason is None and bool(current or self._queue)

    def _run(self) -> None:
        while True:
            with self._cv:
                self._cv.wait_for(lambda: not self._running or self._ready())
                if not self._running:
                    return
                if self._current is None:
                    self._current = self._queue.popleft()
                job = self._current
                delay = self._conditions.slow_seconds
            if delay > 0 and job.remaining:
                # One copy takes `delay`; a condition set meanwhile stops the batch after it.
                with self._cv:
                    if self._cv.wait_for(lambda: not self._running, timeout=delay):
                        return
            with self._cv:
                if job is not self._current:
                    continue
                count = min(job.remaining, 1 if delay > 0 else job.remaining)
                job.remaining -= count
                job.printed += count
                self._odometer += count
                done = job.remaining == 0
                if done:
                    self._current = None
                self._cv.notify_all()
            if done:
                self._finish(job)

    def _finish(self, job: _Job) -> None:
        if not job.printed:
            return  # cancelled before its first copy
        label = job.label
        printed = PrintedLabel(
            seq=job.seq,
            image=job.image,
            copies=job.printed,
            copies_requested=label.copies,
            compression=label.compression,
            crc_ok=label.crc_ok,
            received_at=label.received_at,
            printed_at=datetime.now(UTC),
            warnings=tuple(label.warnings),
        )
        if self.out_dir is not None:
            try:
                png = write_label(self.out_dir, job.seq, job.image, self._meta(printed))
                printed = replace(printed, png_path=png)
            except OSError as exc:  # a full disk must not stop the printer
                log.error("label %d: could not write its files: %s", job.seq, exc)
        with self._cv:
            self._printed.append(printed)
            self._printed_total += 1
            odometer = self._odometer
            self._cv.notify_all()
        where = f" → {printed.png_path}" if printed.png_path else ""
        log.info(
            "label %d printed: %d cop%s, odometer %d%s",
            job.seq,
            job.printed,
            "y" if job.printed == 1 else "ies",
            odometer,
            where,
        )

    def _meta(self, printed: PrintedLabel) -> dict[str, Any]:
        return {
            "seq": printed.seq,
            "png": f"{stem(printed.seq)}.png",
            "width": printed.width,
            "height": printed.height,
            "dpi": self.dpi,
            "copies": printed.copies,
            "copies_requested": printed.copies_requested,
            "compression": printed.compression,
            "crc_ok": printed.crc_ok,
            "received_at": printed.received_at.isoformat(),
            "printed_at": printed.printed_at.isoformat(),
            "warnings": list(printed.warnings),
        }
