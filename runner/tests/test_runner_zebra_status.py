"""Parsing the printer's status answers as the ZPL II Programming Guide documents them; the
simulator's answers (read over TCP) must parse to the conditions it was given."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from etikett_runner.printer_sim import PrinterSimulator
from etikett_runner.targets import Address
from etikett_runner.zebra import (
    NoAnswer,
    PrinterConnection,
    PrinterState,
    PrinterUnreachable,
    parse_uri,
)
from etikett_runner.zebra_status import (
    ErrorStatus,
    StatusFormatError,
    combined_reasons,
    parse_error_status,
    parse_getvar,
    parse_host_status,
    parse_identification,
)

READY = (
    b"\x02030,0,0,1218,000,0,0,0,000,0,0,0\x03\r\n"
    b"\x02001,0,0,0,1,2,6,0,00000000,1,000\x03\r\n"
    b"\x021234,0\x03\r\n"
)


def hs(line1: str, line2: str) -> bytes:
    return (
        b"\x02" + line1.encode() + b"\x03\r\n\x02" + line2.encode() + b"\x03\r\n\x021234,0\x03\r\n"
    )


def test_a_ready_printer() -> None:
    status = parse_host_status(READY)
    assert status.reasons == ()
    assert status.label_length == 1218 and status.thermal_transfer
    assert not status.busy


def test_host_status_flags_by_position() -> None:
    status = parse_host_status(
        hs("030,1,1,0812,003,1,0,1,000,0,0,1", "001,0,1,1,1,2,6,0,00000007,1,000")
    )
    assert status.paper_out and status.paused and status.head_open and status.ribbon_out
    assert status.formats_in_buffer == 3 and status.buffer_full and status.partial_format
    assert status.labels_remaining == 7 and status.over_temperature and status.busy
    assert status.reasons == ("head_open", "paper_out", "ribbon_out", "paused")


def test_ribbon_out_counts_only_in_thermal_transfer_mode() -> None:
    direct = parse_host_status(
        hs("030,0,0,0812,000,0,0,0,000,0,0,0", "000,0,0,1,0,2,6,0,00000000,1,000")
    )
    assert direct.reasons == ()


@pytest.mark.parametrize(
    "answer",
    [
        b"",
        b"\x02030,0,0\x03\r\n",  # one short string
        hs("030,x,0,0812,000,0,0,0,000,0,0,0", "001,0,0,0,1,2,6,0,00000000,1,000"),
        hs("030,0,0,0812,000,0,0,0,000,0,0,0", "001,0,0,0,1,2,6,0,0000000A,1,000"),
    ],
)
def test_malformed_host_status_is_refused(answer: bytes) -> None:
    with pytest.raises(StatusFormatError):
        parse_host_status(answer)


def test_error_status_bits() -> None:
    answer = (
        b"\x02\r\n\r\n  PRINTER STATUS\r\n"
        b"   ERRORS:         1 00000000 00010005\r\n"
        b"   WARNINGS:       0 00000000 00000000\r\n\x03"
    )
    status = parse_error_status(answer)
    assert status.errors == 0x00010005
    assert status.reasons == ("head_open", "paper_out", "paused")
    assert ErrorStatus(0x00000008 | 0x00100000, 0).reasons == ("cutter_fault", "printer_error")
    no_errors = answer.replace(b"1 00000000 00010005", b"0 00000000 00000000")
    assert parse_error_status(no_errors).reasons == ()
    with pytest.raises(StatusFormatError):
        parse_error_status(b"\x02garbage\x03")


def test_both_answers_combine() -> None:
    host = parse_host_status(
        hs("030,0,1,0812,000,0,0,0,000,0,0,0", "001,0,0,0,1,2,6,0,00000000,1,000")
    )
    assert combined_reasons(host, ErrorStatus(0x1, 0)) == ("paper_out", "paused")
    assert combined_reasons(None, ErrorStatus(0x4, 0)) == ("head_open",)


def test_a_printer_state_in_words_for_people() -> None:
    """What a held job's message says: every reason in words, the first to fix first."""
    held = PrinterState(host=None, errors=ErrorStatus(0x00010005, 0))
    assert held.description == "the print head is open, out of paper, paused"
    assert PrinterState(None, ErrorStatus(0x00100000, 0)).description == "printer error"
    assert PrinterState(None, None).description == "ready"


def test_identification_and_resolution() -> None:
    ident = parse_identification(b"\x02ZT411-203dpi,V92.21.39Z,8,8176KB\x03")
    assert (ident.model, ident.firmware, ident.dpi, ident.memory) == (
        "ZT411-203dpi",
        "V92.21.39Z",
        203,
        "8176KB",
    )
    assert parse_identification(b"\x02ZT610,V1,12,8176KB,EXTRA\x03").dpi == 300
    assert parse_identification(b"\x02ZD421,V1,24\x03").dpi == 600
    assert parse_identification(b"\x02XYZ,V1,7\x03").dpi is None


def test_getvar_values() -> None:
    assert parse_getvar(b'"1234"') == "1234"
    assert parse_getvar(b'"?"') is None
    with pytest.raises(StatusFormatError):
        parse_getvar(b'"12')


def test_printer_uris() -> None:
    assert parse_uri("tcp://10.0.0.5:9100") == Address("10.0.0.5", 9100)
    assert parse_uri("tcp://[::1]:6101") == Address("::1", 6101)
    for bad in ("http://x:1", "tcp://x", "tcp://x:0", "tcp://x:70000"):
        with pytest.raises(ValueError):
            parse_uri(bad)


@pytest.fixture
def sim() -> Iterator[PrinterSimulator]:
    with PrinterSimulator(port=0, dpi=300, model="ZT610-300dpi", odometer=17) as printer:
        yield printer


def test_the_simulator_answers_parse_to_its_conditions(sim: PrinterSimulator) -> None:
    with PrinterConnection(Address("127.0.0.1", sim.port)) as conn:
        assert conn.state().ready
        ident = conn.identify()
        assert (ident.model, ident.dpi) == ("ZT610-300dpi", 300)
        assert conn.odometer() == 17
        assert conn.getvar("no.such.variable") is None
        for condition, reason in (
            ({"paper_out": True}, "paper_out"),
            ({"head_open": True}, "head_open"),
            ({"paused": True}, "paused"),
        ):
            sim.set_condition(**condition)
            state = conn.state()
            assert state.status == reason and state.host is not None
            assert state.errors is not None and reason in state.errors.reasons
            sim.set_condition(**{name: False for name in condition})
        assert conn.state().status == "ready"


def test_a_closed_port_is_unreachable_and_a_silent_one_has_no_answer() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(PrinterUnreachable):
        PrinterConnection(Address("127.0.0.1", port), connect_timeout=1).open()
    with socket.create_server(("127.0.0.1", 0)) as silent:
        conn = PrinterConnection(Address("127.0.0.1", silent.getsockname()[1]), 1, 0.3).open()
        with conn, pytest.raises(NoAnswer):
            conn.state()
