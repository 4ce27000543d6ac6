"""A connection to a label printer's raw port (`tcp://host:9100`): status queries (`~HS`,
`~HQES`, `~HI`, SGD `getvar`) and sending job bytes. Blocking sockets with deadlines."""

from __future__ import annotations

import contextlib
import re
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

from etikett_engine.printer_reach import DEFAULT_PORT
from etikett_runner import reach
from etikett_runner.targets import Address
from etikett_runner.zebra_status import (
    ETX,
    ErrorStatus,
    HostStatus,
    Identification,
    StatusFormatError,
    combined_reasons,
    parse_error_status,
    parse_getvar,
    parse_host_status,
    parse_identification,
)

ODOMETER = "odometer.total_label_count"
_URI = re.compile(r"^tcp://(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.\-]{1,253}):(?P<port>\d{1,5})/?$")


class PrinterUnreachable(Exception):
    """No connection to the printer, or it broke off."""


class PrinterRefused(PrinterUnreachable):
    """The Runner does not connect there (`reach`): not a printer's address or port."""


class NoAnswer(Exception):
    """Connected, but the printer did not answer a query in time (or not in its format)."""


def parse_uri(uri: str) -> Address:
    """`tcp://host:port` → Address; ValueError for anything else."""
    match = _URI.match(uri.strip())
    if match is None:
        raise ValueError(f"printer URI {uri!r} is not tcp://host:port")
    port = int(match["port"] or DEFAULT_PORT)
    if not 0 < port < 65536:
        raise ValueError(f"printer URI {uri!r}: bad port")
    return Address(match["host"].strip("[]"), port)


@dataclass(frozen=True)
class PrinterState:
    """What the printer said about itself: ready, or the reasons it holds labels."""

    host: HostStatus | None
    errors: ErrorStatus | None

    @property
    def reasons(self) -> tuple[str, ...]:
        return combined_reasons(self.host, self.errors)

    @property
    def ready(self) -> bool:
        return not self.reasons

    @property
    def status(self) -> str:
        """One word for people and the server: `ready` or the first reason."""
        reasons = self.reasons
        return reasons[0] if reasons else "ready"

    @property
    def description(self) -> str:
        """The reasons in words for people (`paper_out, head_open` → "out of paper, the print
        head is open"), or `ready`."""
        return ", ".join(_REASON_WORDS.get(r, r) for r in self.reasons) or "ready"

    @property
    def busy(self) -> bool:
        return self.host.busy if self.host is not None else False


_REASON_WORDS = {
    "head_open": "the print head is open",
    "paper_out": "out of paper",
    "ribbon_out": "out of ribbon",
    "paused": "paused",
    "cutter_fault": "cutter fault",
    "head_over_temperature": "print head too hot",
    "motor_over_temperature": "motor too hot",
    "printhead_fault": "print head fault",
    "invalid_firmware_config": "invalid firmware configuration",
    "paper_jam": "paper jam",
    "printer_error": "printer error",
}


class PrinterConnection:
    def __init__(
        self, address: Address, connect_timeout: float = 3.0, answer_timeout: float = 3.0
    ) -> None:
        self.address = address
        self.connect_timeout = connect_timeout
        self.answer_timeout = answer_timeout
        self._sock: socket.socket | None = None
        self.supports_hqes = True

    # --- lifecycle ----------------------------------------------------------------------------

    def open(self) -> PrinterConnection:
        """Connect to a checked address of the printer (`reach`): the name is resolved and
        checked here, and the socket gets the address that was checked, never the name."""
        try:
            addresses = reach.printer_addresses(self.address.host, self.address.port)
        except reach.NotAPrinter as refused:
            raise PrinterRefused(str(refused)) from None
        sock: socket.socket | None = None
        failure: OSError | None = None
        for address in addresses:
            try:
                sock = socket.create_connection(
                    (address, self.address.port), timeout=self.connect_timeout
                )
                break
            except OSError as exc:
                failure = exc
        if sock is None:
            assert failure is not None
            raise PrinterUnreachable(f"{self.address}: {failure.strerror or failure}") from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._sock = sock
        return self

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.close()

    def __enter__(self) -> PrinterConnection:
        return self if self._sock is not None else self.open()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    # --- queries ------------------------------------------------------------------------------

    def host_status(self) -> HostStatus:
        data = self._query(b"~HS", lambda got: got.count(ETX) >= 3)
        try:
            return parse_host_status(data)
        except StatusFormatError as exc:
            raise NoAnswer(f"{self.address}: ~HS: {exc}") from None

    def error_status(self) -> ErrorStatus | None:
        """`~HQES`; None when this printer does not know it (older firmware stays silent)."""
        if not self.supports_hqes:
            return None
        try:
            data = self._query(b"~HQES", lambda got: ETX in got, timeout=1.5)
            return parse_error_status(data)
        except (NoAnswer, StatusFormatError):
            self.supports_hqes = False
            return None

    def state(self) -> PrinterState:
        """`~HS` and `~HQES`. A printer that is out of paper or has its head open may not answer
        `~HS` at all (Zebra documents this); then `~HQES` alone tells why."""
        try:
            host: HostStatus | None = self.host_status()
        except NoAnswer:
            host = None
        errors = self.error_status()
        if host is None and errors is None:
            raise NoAnswer(f"{self.address}: no answer to ~HS or ~HQES")
        return PrinterState(host, errors)

    def identify(self) -> Identification:
        data = self._query(b"~HI", lambda got: ETX in got)
        try:
            return parse_identification(data)
        except StatusFormatError as exc:
            raise NoAnswer(f"{self.address}: ~HI: {exc}") from None

    def getvar(self, name: str) -> str | None:
        command = f'! U1 getvar "{name}"\r\n'.encode("ascii")
        data = self._query(command, lambda got: got.count(b'"') >= 2)
        try:
            return parse_getvar(data)
        except StatusFormatError as exc:
            raise NoAnswer(f"{self.address}: getvar {name}: {exc}") from None

    def odometer(self) -> int | None:
        """The printer's total printed-label count; None if it does not report one."""
        value = self.getvar(ODOMETER)
        if value is None:
            return None
        digits = value.replace(",", "").strip()
        return int(digits) if digits.isdigit() else None

    # --- sending ------------------------------------------------------------------------------

    def send(self, data: bytes, timeout: float = 60.0) -> None:
        """All of `data`, or PrinterUnreachable (then an unknown part may have arrived)."""
        sock = self._require()
        try:
            sock.settimeout(timeout)
            sock.sendall(data)
        except OSError as exc:
            self.close()
            raise PrinterUnreachable(f"{self.address}: sending failed: {exc}") from None

    # --- plumbing -----------------------------------------------------------------------------

    def _require(self) -> socket.socket:
        if self._sock is None:
            raise PrinterUnreachable(f"{self.address}: not connected")
        return self._sock

    def _drain(self, sock: socket.socket) -> None:
        """Drop bytes a late answer left behind, so they can't pass for the next answer."""
        sock.setblocking(False)
        try:
            while sock.recv(65536):
                pass
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as exc:
            self.close()
            raise PrinterUnreachable(f"{self.address}: {exc}") from None
        finally:
            if self._sock is not None:
                sock.setblocking(True)

    def _query(
        self, command: bytes, complete: Callable[[bytes], bool], timeout: float | None = None
    ) -> bytes:
        sock = self._require()
        self._drain(sock)
        try:
            sock.settimeout(self.answer_timeout)
            sock.sendall(command)
        except OSError as exc:
            self.close()
            raise PrinterUnreachable(f"{self.address}: {exc}") from None
        deadline = time.monotonic() + (timeout or self.answer_timeout)
        received = bytearray()
        while not complete(bytes(received)):
            left = deadline - time.monotonic()
            if left <= 0:
                raise NoAnswer(f"{self.address}: no complete answer to {command[:20]!r}")
            try:
                sock.settimeout(left)
                chunk = sock.recv(65536)
            except TimeoutError:
                continue
            except OSError as exc:
                self.close()
                raise PrinterUnreachable(f"{self.address}: {exc}") from None
            if not chunk:
                self.close()
                raise PrinterUnreachable(f"{self.address}: the printer closed the connection")
            received += chunk
        return bytes(received)
