"""Where the service lets a Runner connect as a printer (checked again on the Runner): private
or link-local addresses, or names, on printer ports; loopback only with LoopbackPrinters."""

from __future__ import annotations

import pytest

from etikett import settings
from etikett.domain.printers.printer_addresses import address_refusal, check_targets, check_uri
from etikett_engine.errors import InvalidRequest, ProblemCode
from etikett_engine.printer_reach import PRINTER_PORTS

WITH_9101 = PRINTER_PORTS | {9101}


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETIKETT_LOOPBACK_PRINTERS", "false")
    settings.reload()


@pytest.fixture
def local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETIKETT_LOOPBACK_PRINTERS", "true")
    settings.reload()


@pytest.mark.parametrize(
    ("host", "port", "why"),
    [
        ("93.184.216.34", 9100, "not a private"),
        ("2606:4700::1111", 9100, "not a private"),
        ("10.0.0.5", 22, "port 22"),
        ("10.0.0.5", 9101, "port 9101"),
        ("printer.lan", 80, "port 80"),
        ("127.0.0.1", 9100, "loopback"),
        ("::1", 9100, "loopback"),
        ("localhost", 9100, "loopback"),
        ("::ffff:8.8.8.8", 9100, "not a private"),
        ("0.0.0.0", 9100, "unicast"),
    ],
)
def test_refused_on_a_deployed_stack(deployed: None, host: str, port: int, why: str) -> None:
    reason = address_refusal(host, port, PRINTER_PORTS)
    assert reason is not None and why in reason, reason


@pytest.mark.parametrize(
    ("host", "port", "ports"),
    [
        ("10.0.0.5", 9100, PRINTER_PORTS),
        ("192.168.1.20", 6101, PRINTER_PORTS),
        ("172.16.0.9", 515, PRINTER_PORTS),
        ("169.254.10.10", 9100, PRINTER_PORTS),
        ("fd00::10", 9100, PRINTER_PORTS),
        ("printer-7.lan", 9100, PRINTER_PORTS),
        ("10.0.0.5", 9101, WITH_9101),
    ],
)
def test_allowed(deployed: None, host: str, port: int, ports: frozenset[int]) -> None:
    assert address_refusal(host, port, ports) is None


def test_loopback_in_local_mode_on_any_port(local_mode: None) -> None:
    assert address_refusal("127.0.0.1", 45678, PRINTER_PORTS) is None
    assert address_refusal("10.0.0.5", 45678, PRINTER_PORTS) is not None  # only loopback


def test_uris_and_targets_are_problems(deployed: None) -> None:
    with pytest.raises(InvalidRequest) as refused:
        check_uri("tcp://8.8.8.8:9100", PRINTER_PORTS)
    assert refused.value.code is ProblemCode.PRINTER_ADDRESS_REFUSED
    assert refused.value.params["uri"] == "tcp://8.8.8.8:9100"
    with pytest.raises(InvalidRequest) as refused:
        check_targets(["10.0.0.0/24", "93.184.216.0/24"], PRINTER_PORTS)
    assert refused.value.params["target"] == "93.184.216.0/24"
    with pytest.raises(InvalidRequest):
        check_targets(["10.0.0.0/24:3306"], PRINTER_PORTS)
    check_targets(["10.0.0.0/24", "[fd00::7]:6101", "zebra.lan"], PRINTER_PORTS)
