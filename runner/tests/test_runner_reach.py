"""What a Runner connects to, decided on its own side after names resolve, whatever the service
asked: printers at private or link-local addresses on printer ports (loopback only with
--loopback-printers), raw jobs only in a printer language. A compromised service cannot make
it a proxy into the site's network."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from etikett_runner import jobs, reach
from etikett_runner.printer_sim import PrinterSimulator
from etikett_runner.printers import Printers
from etikett_runner.targets import Address, TargetError, expand
from etikett_runner.tuning import Tuning
from etikett_runner.zebra import PrinterConnection, PrinterRefused
from runner_fakes import Harness

FAST = Tuning(unreachable_seconds=1.0, held_recheck_seconds=0.2, confirm_seconds=2.0)


@pytest.fixture
def policy() -> Iterator[Callable[[reach.Reach], None]]:
    yield reach.configure
    reach.configure(None)


class Listener:
    """A TCP service that only counts who connects (an internal HTTP API, say)."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self.received = b""
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.settimeout(0.5)
            try:
                while chunk := conn.recv(65536):
                    self.received += chunk
            except OSError:
                pass
            conn.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    service = Listener()
    yield service
    service.sock.close()


@pytest.mark.parametrize(
    ("host", "port", "why"),
    [
        ("93.184.216.34", 9100, "not a private"),
        ("8.8.8.8", 515, "not a private"),
        ("10.0.0.5", 22, "not a printer port"),
        ("192.168.1.20", 80, "not a printer port"),
        ("127.0.0.1", 9100, "loopback"),
        ("224.0.0.1", 9100, "unicast"),
    ],
)
def test_addresses_and_ports_a_runner_refuses(
    policy: Callable[[reach.Reach], None], host: str, port: int, why: str
) -> None:
    policy(reach.Reach(loopback_printers=False))
    with pytest.raises(reach.NotAPrinter, match=why):
        reach.printer_addresses(host, port)


def test_private_and_link_local_printers_on_printer_ports(
    policy: Callable[[reach.Reach], None],
) -> None:
    policy(reach.Reach())
    for host, port in (("10.0.0.5", 9100), ("172.16.4.2", 6101), ("169.254.3.9", 515)):
        assert reach.printer_addresses(host, port) == [host]
    with pytest.raises(reach.NotAPrinter, match="port 9101"):
        reach.printer_addresses("10.0.0.5", 9101)
    reach.allow_group_ports([9101])  # what the group's configuration says
    assert reach.printer_addresses("10.0.0.5", 9101) == ["10.0.0.5"]


def test_a_name_is_checked_after_it_resolves(
    monkeypatch: pytest.MonkeyPatch, policy: Callable[[reach.Reach], None]
) -> None:
    real = socket.getaddrinfo

    def resolving(host: str, port: object, *args: object, **kwargs: object) -> object:
        table = {"zebra-3.lan": "10.1.1.3", "evil.example": "93.184.216.34"}
        if host in table:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (table[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolving)
    policy(reach.Reach())
    assert reach.printer_addresses("zebra-3.lan", 9100) == ["10.1.1.3"]
    with pytest.raises(reach.NotAPrinter, match=r"93\.184\.216\.34"):
        reach.printer_addresses("evil.example", 9100)


def test_loopback_needs_the_flag_and_then_takes_any_port(
    listener: Listener, policy: Callable[[reach.Reach], None]
) -> None:
    address = Address("127.0.0.1", listener.port)
    policy(reach.Reach(loopback_printers=False))
    with pytest.raises(PrinterRefused, match="loopback"):
        PrinterConnection(address, 1.0, 1.0).open()
    assert listener.connections == 0
    policy(reach.Reach(loopback_printers=True))
    PrinterConnection(address, 1.0, 1.0).open().close()
    assert _eventually(lambda: listener.connections == 1)


def test_discovery_targets_are_checked_on_the_runner(policy: Callable[[reach.Reach], None]) -> None:
    policy(reach.Reach())
    for target in ("93.184.216.0/24", "10.0.0.0/24:22", "8.8.8.8", "10.0.0.7:8080", "127.0.0.1"):
        with pytest.raises(TargetError):
            expand([target])
    assert len(expand(["10.0.0.0/24", "192.168.7.7:6101", "printer.lan"])) == 256
    with pytest.raises(TargetError, match="port"):
        expand(["printer.lan:3306"])


def test_a_raw_job_that_is_not_printer_data_never_leaves(
    tmp_path: Path, listener: Listener, policy: Callable[[reach.Reach], None]
) -> None:
    """Even with loopback allowed and whatever the service passed on: HTTP is not ZPL."""
    policy(reach.Reach(loopback_printers=True))
    harness = Harness(tmp_path / "state")
    payload = {
        "printer": {
            "printer_id": "prn_1",
            "uri": f"tcp://127.0.0.1:{listener.port}",
            "language": "zpl",
            "dpi": 203,
        },
        "expected_labels": 1,
    }
    request = b"POST /api/reset HTTP/1.1\r\nHost: 10.0.0.5\r\nContent-Length: 0\r\n\r\n"
    jobs.execute(harness.context("job_1", "raw", payload, request), Printers(), FAST)
    final = harness.service.bodies("job_1")[-1]
    assert final["status"] == "failed" and final["reason"] == "not_printer_data"
    assert listener.connections == 0


def test_a_job_for_a_refused_printer_fails_at_once(
    tmp_path: Path, policy: Callable[[reach.Reach], None]
) -> None:
    policy(reach.Reach(loopback_printers=False))
    with PrinterSimulator(port=0) as sim:
        harness = Harness(tmp_path / "state")
        payload = {
            "printer": {"uri": f"tcp://127.0.0.1:{sim.port}", "language": "zpl", "dpi": 203},
            "expected_labels": 1,
        }
        jobs.execute(harness.context("job_1", "raw", payload, b"^XA^XZ"), Printers(), FAST)
        final = harness.service.bodies("job_1")[-1]
        assert final["status"] == "failed" and final["reason"] == "address_refused"
        assert sim.printed == []


def _eventually(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
