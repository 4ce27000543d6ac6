"""`PrinterSimulator`: the raw TCP port of a Zebra printer, its status answers and its conditions.

Each connection is read on its own thread as bytes arrive; formats, status queries and SGD
commands are handled in the order sent, and answers go back on the same connection. Finished
labels go to the print engine (`printer.py`).
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from etikett_runner.printer_sim.control import ControlServer
from etikett_runner.printer_sim.formats import (
    FormatBuilder,
    LabelFormat,
    Layout,
    LayoutStore,
    compose,
)
from etikett_runner.printer_sim.graphics import GraphicError
from etikett_runner.printer_sim.listener import Listener
from etikett_runner.printer_sim.printer import (
    Conditions,
    PrintedLabel,
    PrintEngine,
    SimError,
    validate_conditions,
)
from etikett_runner.printer_sim.status import (
    StatusSnapshot,
    dots_per_mm,
    error_status,
    getvar,
    host_identification,
    host_status,
)
from etikett_runner.printer_sim.stream import Command, Item, Sgd, StreamError, ZplStream

log = logging.getLogger("etikett_runner.printer_sim")

DEFAULT_FIRMWARE = "V92.21.39Z"
DEFAULT_MEMORY = "8176KB"


class PrinterSimulator:
    """A Zebra-like label printer on `host:port` (port 0: any free port, see `.port`).

    `out_dir`: where printed labels go as `label-<seq>.png` + `.json` (None: memory only).
    `keep`: how many printed labels and errors to keep in memory (None: all).
    `control_port`: also serve the HTTP control endpoint on 127.0.0.1 (0: any free port).
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 9100,
        dpi: int = 203,
        out_dir: str | Path | None = None,
        model: str | None = None,
        *,
        firmware: str = DEFAULT_FIRMWARE,
        memory: str = DEFAULT_MEMORY,
        odometer: int = 0,
        keep: int | None = None,
        control_port: int | None = None,
    ) -> None:
        if dpi < 100 or dpi > 1200:
            raise ValueError(f"dpi {dpi} is not a printer's resolution")
        self.host = host
        self._port = port
        self.dpi = dpi
        self.model = model or f"ZT411-{dpi}dpi"
        self.firmware = firmware
        self.memory = memory
        self.out_dir = Path(out_dir) if out_dir is not None else None
        # A ZT411's printhead is 4.09 in (104 mm) wide. Labels are capped at 39 in, so a bad ^LL
        # cannot allocate a huge raster; 4x6 in until a ^LL says otherwise.
        self.head_width = dots_per_mm(dpi) * 104
        self.max_length = 39 * dpi
        self._layout = LayoutStore(Layout(print_width=self.head_width, label_length=6 * dpi))
        self.engine = PrintEngine(dpi=dpi, out_dir=self.out_dir, keep=keep, odometer=odometer)
        self._control_port_wanted = control_port
        self._control: ControlServer | None = None
        self._lock = threading.RLock()  # state shared with connection threads: held briefly
        self._port_lock = threading.Lock()  # opening/closing the port: may wait for threads
        self._running = False
        self._listener: Listener | None = None
        self._connections: dict[socket.socket, threading.Thread] = {}
        self._open_formats: set[int] = set()  # connections inside ^XA … ^XZ (the ~HS h flag)
        # Called with the query's name (`~HS`, `~HQ`, `~HI`, or `getvar <name>`) once its answer
        # is sent: tests change the printer there, between two queries of a client.
        self.after_answer: Callable[[str], None] | None = None
        self._sgd_values = {
            "device.languages": "zpl",
            "appl.name": firmware,
            "head.resolution.in_dpi": str(dpi),
        }

    # --- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The TCP port: the real one once started, also when 0 was asked for."""
        return self._port

    @property
    def control_port(self) -> int | None:
        return self._control.port if self._control is not None else None

    @property
    def running(self) -> bool:
        return self._running

    def start(self) -> PrinterSimulator:
        with self._port_lock:
            if self._running:
                raise RuntimeError("the simulator is already running")
            if not self.engine.conditions.unreachable:
                self._listen()
            self.engine.start()
            self._running = True
        if self._control_port_wanted is not None and self._control is None:
            try:
                self._control = ControlServer(self, self._control_port_wanted)
            except OSError:
                self.stop()  # all or nothing: no printer without the control asked for
                raise
            self._control.start()
        log.info(
            "%s (%d dpi, %s) on tcp://%s:%d",
            self.model,
            self.dpi,
            self.firmware,
            self.host,
            self._port,
        )
        return self

    def stop(self) -> None:
        """Power off: connections close, the buffer is lost; odometer and history stay."""
        with self._port_lock:
            if not self._running:
                return
            self._running = False
            self._close_port()
        self.engine.stop()
        if self._control is not None:
            self._control.stop()
            self._control = None
        log.info("stopped")

    def __enter__(self) -> PrinterSimulator:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # --- conditions and state --------------------------------------------------------------

    def set_condition(
        self,
        *,
        paper_out: bool | None = None,
        paused: bool | None = None,
        head_open: bool | None = None,
        ribbon_out: bool | None = None,
        slow_seconds: float | None = None,
        unreachable: bool | None = None,
    ) -> Conditions:
        """Change the given conditions (None leaves one as it is); returns them all."""
        given = {
            "paper_out": paper_out,
            "paused": paused,
            "head_open": head_open,
            "ribbon_out": ribbon_out,
            "slow_seconds": slow_seconds,
            "unreachable": unreachable,
        }
        return self.apply_conditions({k: v for k, v in given.items() if v is not None})

    def apply_conditions(self, values: dict[str, Any]) -> Conditions:
        """`set_condition` from a mapping (the HTTP endpoint): validated, ValueError if bad."""
        changes = validate_conditions(values)
        with self._port_lock:
            before = self.engine.conditions
            after = self.engine.set_conditions(**changes)
            if self._running and before.unreachable != after.unreachable:
                if after.unreachable:
                    self._close_port()
                else:
                    self._listen()
        return after

    @property
    def conditions(self) -> Conditions:
        return self.engine.conditions

    @property
    def printed(self) -> list[PrintedLabel]:
        return self.engine.printed

    @property
    def odometer(self) -> int:
        return self.engine.odometer

    @property
    def errors(self) -> list[SimError]:
        return self.engine.errors

    def snapshot(self) -> StatusSnapshot:
        """What ~HS and ~HQES report right now."""
        with self._lock:
            partial = bool(self._open_formats)
        return self.engine.snapshot(
            label_length=self._layout.get().label_length, partial_format=partial
        )

    def wait_printed(self, count: int, timeout: float = 10.0) -> list[PrintedLabel]:
        """Block until `count` labels have been printed since start; all kept labels."""
        if not self.engine.wait(lambda: self.engine.printed_total >= count, timeout):
            raise TimeoutError(f"{self.engine.printed_total} of {count} labels printed")
        return self.printed

    def wait_until(
        self, predicate: Callable[[StatusSnapshot], bool], timeout: float = 10.0
    ) -> None:
        """Block until `predicate(self.snapshot())` holds."""
        if not self.engine.wait(lambda: predicate(self.snapshot()), timeout):
            raise TimeoutError(f"not reached within {timeout} s: {self.snapshot()}")

    def status(self) -> dict[str, Any]:
        """Everything a person wants to see at once (GET /status)."""
        snap = self.snapshot()
        conditions = self.conditions
        printed = self.printed
        return {
            "model": self.model,
            "firmware": self.firmware,
            "dpi": self.dpi,
            "host": self.host,
            "port": self._port,
            "running": self._running,
            "listening": self._listener is not None,
            "out_dir": str(self.out_dir) if self.out_dir else None,
            "conditions": {
                "paper_out": conditions.paper_out,
                "paused": conditions.paused,
                "head_open": conditions.head_open,
                "ribbon_out": conditions.ribbon_out,
                "slow_seconds": conditions.slow_seconds,
                "unreachable": conditions.unreachable,
            },
            "held": conditions.hold_reason,
            "odometer": snap.odometer,
            "formats_in_buffer": snap.formats_in_buffer,
            "labels_remaining": snap.labels_remaining,
            "labels_printed": self.engine.printed_total,
            "errors": self.engine.error_total,
            "recent_errors": [
                {"at": e.at.isoformat(), "kind": e.kind, "message": e.message, "peer": e.peer}
                for e in self.errors[-10:]
            ],
            "last_label": None
            if not printed
            else {
                "seq": printed[-1].seq,
                "width": printed[-1].width,
                "height": printed[-1].height,
                "copies": printed[-1].copies,
                "png": str(printed[-1].png_path) if printed[-1].png_path else None,
            },
        }

    # --- the TCP port ----------------------------------------------------------------------

    def _listen(self) -> None:
        listener = Listener(self.host, self._port, self._accept)
        with self._lock:
            self._listener = listener
        self._port = listener.port
        listener.start()  # only now: _accept refuses connections while _listener is unset

    def _close_port(self) -> None:
        """Refuse connections and drop the open ones (power off, or "unreachable").

        Called with `_port_lock`, never `_lock`: it waits for threads that take `_lock`.
        """
        with self._lock:
            listener, self._listener = self._listener, None
            connections = dict(self._connections)
        if listener is not None:
            listener.close()
        for conn in connections:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)  # wakes the reader thread blocked in recv
        for thread in connections.values():
            if thread is not threading.current_thread():
                thread.join(timeout=5)

    def _accept(self, conn: socket.socket, peer: str) -> None:
        with self._lock:
            if self._listener is None:
                conn.close()
                return
            thread = threading.Thread(
                target=self._serve, args=(conn, peer), name=f"printer-sim {peer}", daemon=True
            )
            self._connections[conn] = thread
        thread.start()

    def _serve(self, conn: socket.socket, peer: str) -> None:
        log.debug("connection from %s", peer)
        stream = ZplStream()
        builder = FormatBuilder(self._layout, self.head_width, self.max_length)
        key = id(builder)
        try:
            while True:
                data = conn.recv(65536)
                items = stream.feed(data) if data else stream.close()
                for item in items:
                    reply = self._dispatch(item, builder, peer)
                    if reply:
                        conn.sendall(reply)
                        hook = self.after_answer
                        if hook is not None:
                            hook(f"getvar {item.getvar}" if isinstance(item, Sgd) else item.name)
                if not data:
                    break
        except StreamError as exc:
            self.engine.record_error("stream", f"{exc}; connection closed", peer)
        except OSError as exc:
            log.debug("connection from %s: %s", peer, exc)
        except Exception:  # a bug here must not pass silently, nor take other connections down
            log.exception("connection from %s failed", peer)
            self.engine.record_error("internal", "the simulator failed on this input", peer)
        finally:
            with self._lock:
                self._open_formats.discard(key)
                self._connections.pop(conn, None)
                running = self._running and self._listener is not None
            if builder.in_format and running:
                self.engine.record_error(
                    "incomplete_format", "connection closed inside ^XA … ^XZ: discarded", peer
                )
            conn.close()
            log.debug("connection from %s closed", peer)

    def _dispatch(self, item: Item, builder: FormatBuilder, peer: str) -> bytes | None:
        if isinstance(item, Sgd):
            if item.getvar is None:
                log.debug("SGD from %s ignored: %s", peer, item.line)
                return None
            log.debug("SGD getvar %s from %s", item.getvar, peer)
            return getvar(item.getvar, self.snapshot(), self._sgd_values)
        name = item.name
        if name.startswith("~"):
            return self._control_command(item, peer)
        result = builder.handle(item)
        if name in ("^XA", "^XZ"):  # keep the ~HS "partial format" flag current
            with self._lock:
                if builder.in_format:
                    self._open_formats.add(id(builder))
                else:
                    self._open_formats.discard(id(builder))
        if isinstance(result, GraphicError):
            self.engine.record_error(result.kind, f"graphic dropped: {result}", peer)
        elif isinstance(result, LabelFormat):
            if result.errors:
                log.error(
                    "label from %s not printed: %d graphic(s) dropped", peer, len(result.errors)
                )
            else:
                self.engine.submit(result, compose(result))
        return None

    def _control_command(self, command: Command, peer: str) -> bytes | None:
        name = command.name
        log.debug("%s%s from %s", name, command.params[:8], peer)
        if name == "~HS":
            return host_status(self.snapshot())
        if name == "~HQ" and command.params == "ES":
            return error_status(self.snapshot())
        if name == "~HI":
            return host_identification(self.model, self.firmware, self.dpi, self.memory)
        if name in ("~PP", "~PS"):
            self.engine.set_conditions(paused=name == "~PP")
        elif name == "~JA":
            self.engine.cancel_all()
        return None  # other control commands (~SD, ~TA, ~JS, …) change nothing we simulate
