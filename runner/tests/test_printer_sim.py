"""The printer simulator as the real peer: jobs from our encoder over loopback TCP, status answers.

Jobs come from `etikett_engine.render` (the service's encoder; the tests run in the repo's venv, the
simulator itself never imports `etikett`) and are decoded back pixel for pixel.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from etikett_runner.printer_sim import PrinterSimulator
from etikett_runner.printer_sim.graphics import GraphicError, decode_ascii, parse_gf
from etikett_runner.printer_sim.output import first_free_seq
from etikett_runner.printer_sim.stream import ZplStream
from PIL import Image, ImageDraw

from etikett.catalog.vorlagen import get_vorlage, sample_values
from etikett_engine.render import encode_zpl, render, resolve_variables
from etikett_engine.render.bits import black_is_one
from etikett_engine.render.zpl import Compression

NOW = dt.datetime(2025, 5, 20, 7, 30, tzinfo=dt.UTC)
HS_NORMAL_203 = (
    b"\x02030,0,0,1218,000,0,0,0,000,0,0,0\x03\r\n"
    b"\x02001,0,0,0,1,2,6,0,00000000,1,000\x03\r\n"
    b"\x021234,0\x03\r\n"
)
_GFA = re.compile(rb"\^GFA,(\d+),(\d+),(\d+),")


# --- helpers -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vorlagen() -> dict[str, Image.Image]:
    """Two real labels: 4x6 in at 203 dpi (812 dots: rows padded) and a 300 dpi UDI label."""
    images = {}
    for vorlage_id in ("gs1-logistic-label", "udi-datamatrix"):
        vorlage = get_vorlage(vorlage_id)
        assert vorlage is not None
        document = vorlage.label()
        values = resolve_variables(document, sample_values(vorlage), use_samples=True, now=NOW)
        images[vorlage_id] = render(document, values, now=NOW)
    return images


@pytest.fixture
def out(tmp_path: Path) -> Path:
    return tmp_path / "out"


@pytest.fixture
def sim(out: Path) -> Iterator[PrinterSimulator]:
    with PrinterSimulator(port=0, out_dir=out) as simulator:
        yield simulator


def small_label(width: int = 101, height: int = 57, seed: int = 0) -> Image.Image:
    """A mode "1" image with an odd width, runs of black, white and a diagonal."""
    image = Image.new("1", (width, height), 1)
    draw = ImageDraw.Draw(image)
    draw.rectangle((3 + seed, 4, 60, 40), fill=0)
    draw.line((0, 0, width - 1, height - 1), fill=0)
    draw.rectangle((0, height - 3, width - 1, height - 1), fill=0)  # full black rows: ACS "!"
    return image


def connect(sim: PrinterSimulator) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", sim.port), timeout=5)
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def send(sim: PrinterSimulator, data: bytes) -> None:
    with connect(sim) as conn:
        conn.sendall(data)


def read_until(conn: socket.socket, done: Callable[[bytes], bool]) -> bytes:
    data = b""
    while not done(data):
        chunk = conn.recv(4096)
        assert chunk, f"connection closed after {data!r}"
        data += chunk
    return data


def ask(sim: PrinterSimulator, command: bytes, etx: int = 1) -> bytes:
    with connect(sim) as conn:
        conn.sendall(command)
        return read_until(conn, lambda data: data.count(b"\x03") >= etx)


def host_status(sim: PrinterSimulator) -> list[list[str]]:
    answer = ask(sim, b"~HS", etx=3)
    lines = re.findall(rb"\x02([^\x03]*)\x03\r\n", answer)
    assert len(lines) == 3, answer
    return [line.decode().split(",") for line in lines]


def getvar(sim: PrinterSimulator, name: str) -> bytes:
    with connect(sim) as conn:
        conn.sendall(f'! U1 getvar "{name}"\r\n'.encode())
        return read_until(conn, lambda data: data.count(b'"') >= 2)


def hqes(sim: PrinterSimulator) -> tuple[str, str]:
    answer = ask(sim, b"~HQES").decode()
    match = re.search(r"ERRORS:\s+(\d) (\w{8}) (\w{8})", answer)
    assert match is not None and "WARNINGS:       0 00000000 00000000" in answer, answer
    return match[1], match[3]


def assert_same(image: Image.Image, expected: Image.Image) -> None:
    assert image.mode == "1" and image.size == expected.size
    assert image.tobytes() == expected.tobytes()


def tamper(job: bytes, *, data: Callable[[bytes], bytes] | None = None, **counts: int) -> bytes:
    """Change ^GFA's counts (b, c, d offsets) and/or its data."""
    match = _GFA.search(job)
    assert match is not None
    b, c, d = (int(match[i]) + counts.get(name, 0) for i, name in ((1, "b"), (2, "c"), (3, "d")))
    head = job[: match.start()] + f"^GFA,{b},{c},{d},".encode()
    body, tail = job[match.end() :].split(b"^FS", 1)
    return head + (data(body) if data else body) + b"^FS" + tail


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# --- decoding: our encoder, pixel for pixel --------------------------------------------------


@pytest.mark.parametrize("compression", ["z64", "acs", "hex"])
@pytest.mark.parametrize("vorlage_id", ["gs1-logistic-label", "udi-datamatrix"])
def test_decodes_our_encoder_exactly(
    vorlagen: dict[str, Image.Image], out: Path, vorlage_id: str, compression: Compression
) -> None:
    image = vorlagen[vorlage_id]
    dpi = 300 if vorlage_id == "udi-datamatrix" else 203
    with PrinterSimulator(port=0, dpi=dpi, out_dir=out) as sim:
        send(sim, encode_zpl(image, compression=compression))
        [label] = sim.wait_printed(1)
    assert_same(label.image, image)
    assert label.raster == black_is_one(image)
    assert (label.copies, label.compression, label.warnings) == (1, compression, ())
    assert label.crc_ok is (True if compression == "z64" else None)
    assert label.png_path == out / "label-000001.png"
    with Image.open(label.png_path) as png:
        assert_same(png, image)
    meta = json.loads((out / "label-000001.json").read_text())
    assert meta["width"] == image.width and meta["height"] == image.height
    assert (meta["copies"], meta["compression"], meta["dpi"]) == (1, compression, dpi)
    assert meta["crc_ok"] is label.crc_ok
    assert dt.datetime.fromisoformat(meta["received_at"]) <= label.printed_at


@pytest.mark.parametrize("width", [104, 101])  # whole bytes a row: the label is the graphic
@pytest.mark.parametrize("compression", ["z64", "hex"])
def test_a_label_that_is_one_graphic_decodes_exactly(
    sim: PrinterSimulator, width: int, compression: Compression
) -> None:
    image = small_label(width=width, seed=width % 7)
    send(sim, encode_zpl(image, compression=compression) * 2)
    labels = sim.wait_printed(2)
    for label in labels:
        assert_same(label.image, image)
        assert label.raster == black_is_one(image)
    assert labels[0].image is not labels[1].image


def test_copies_print_one_png_and_count_each_copy(sim: PrinterSimulator, out: Path) -> None:
    image = small_label()
    send(sim, encode_zpl(image, copies=3))
    [label] = sim.wait_printed(1)
    assert (label.copies, label.copies_requested, sim.odometer) == (3, 3, 3)
    assert sorted(p.name for p in out.iterdir()) == ["label-000001.json", "label-000001.png"]
    assert json.loads((out / "label-000001.json").read_text())["copies"] == 3
    assert getvar(sim, "odometer.total_label_count") == b'"3"'


def test_two_labels_and_a_status_query_in_one_connection(sim: PrinterSimulator) -> None:
    first, second = small_label(seed=0), small_label(seed=9)
    with connect(sim) as conn:
        conn.sendall(encode_zpl(first, compression="acs") + b"~HS" + encode_zpl(second))
        answer = read_until(conn, lambda data: data.count(b"\x03") >= 3)
    assert answer.startswith(b"\x02030,0,0,0057,")  # ~HS answered between the two labels
    one, two = sim.wait_printed(2)
    assert_same(one.image, first)
    assert_same(two.image, second)
    assert (one.seq, two.seq, sim.odometer) == (1, 2, 2)


def test_a_job_split_into_single_bytes_still_decodes(sim: PrinterSimulator) -> None:
    images = [small_label(seed=seed) for seed in range(3)]
    kinds: tuple[Compression, ...] = ("z64", "acs", "hex")
    jobs = [encode_zpl(im, compression=c) for im, c in zip(images, kinds, strict=True)]
    with connect(sim) as conn:
        for byte in b"".join(jobs):
            conn.send(bytes([byte]))  # TCP_NODELAY: one byte per segment, mostly
        conn.sendall(b"~HS")
        read_until(conn, lambda data: data.count(b"\x03") >= 3)
    for label, image in zip(sim.wait_printed(3), images, strict=True):
        assert_same(label.image, image)
    assert sim.errors == []


def test_the_stream_parser_does_not_care_where_bytes_are_split(
    vorlagen: dict[str, Image.Image],
) -> None:
    job = encode_zpl(vorlagen["udi-datamatrix"], compression="acs") + b'! U1 getvar "x"\r\n~HS'
    whole = ZplStream().feed(job)
    stream = ZplStream()
    pieces = [item for index in range(len(job)) for item in stream.feed(job[index : index + 1])]
    assert pieces == whole
    assert [getattr(item, "name", "sgd") for item in whole] == [
        "^XA", "^PW", "^LL", "^LH", "^FO", "^GF", "^FS", "^PQ", "^XZ", "sgd", "~HS"
    ]  # fmt: skip


def test_zebrafy_graphics_decode_too() -> None:
    import zebrafy

    image = small_label()
    for kind in ("Z64", "B64", "ASCII", "ASCII_COMPRESSED"):
        zpl = zebrafy.ZebrafyImage(image, format=kind).to_zpl()  # b = the data's length
        graphic = parse_gf(zpl.split("^GF", 1)[1].split("^FS", 1)[0])
        decoded = Image.frombytes("1", (graphic.width, graphic.rows), graphic.raw, "raw", "1;I")
        assert_same(decoded.crop((0, 0, image.width, image.height)), image)


def test_binary_graphic_data_is_read_by_count(sim: PrinterSimulator) -> None:
    raw = bytearray(black_is_one(small_label()))
    raw[100:102] = b"^~"  # prefixes inside binary data are data, not commands
    image = Image.frombytes("1", (101, 57), bytes(raw), "raw", "1;I")
    head = f"^XA^PW101^LL57^FO0,0^GFB,{len(raw)},{len(raw)},13,".encode()
    send(sim, head + raw + b"^FS^XZ")
    [label] = sim.wait_printed(1)
    assert label.compression == "binary"
    assert_same(label.image, image)


def test_graphics_that_overlap_add_their_black_dots(sim: PrinterSimulator) -> None:
    """A second graphic's white is transparent: where two overlap, black from either stays."""
    first, second = small_label(), small_label(seed=20).transpose(Image.Transpose.FLIP_TOP_BOTTOM)

    def field(image: Image.Image, x: int, y: int) -> bytes:
        raw = black_is_one(image)
        row = (image.width + 7) // 8
        return f"^FO{x},{y}^GFB,{len(raw)},{len(raw)},{row},".encode() + raw + b"^FS"

    send(sim, b"^XA^PW140^LL80" + field(first, 0, 0) + field(second, 30, 15) + b"^XZ")
    [label] = sim.wait_printed(1)

    def black(image: Image.Image, x: int, y: int) -> bool:
        inside = 0 <= x < image.width and 0 <= y < image.height
        return inside and image.getpixel((x, y)) == 0

    expected = Image.new("1", (140, 80), 1)
    for y in range(80):
        for x in range(140):
            if black(first, x, y) or black(second, x - 30, y - 15):
                expected.putpixel((x, y), 0)
    assert_same(label.image, expected)


def test_acs_grammar() -> None:
    # 3 bytes a row: `,` fills with 0, `!` with F, `:` repeats, G-Y count 1-19.
    raw, kind = decode_ascii("0F," + "!" + ":" + "LF" + "IAB," + "HF0HF1", 18, 3)
    assert kind == "acs"
    assert raw.hex().upper() == "0F0000FFFFFFFFFFFFFFFFFFAAAB00FF0FF1"
    assert decode_ascii("gH0", 11, 11) == (bytes(11), "acs")  # counts add up: 20 + 2
    assert decode_ascii("zzGF0", 401, 401)[0] == bytes.fromhex("F" * 801 + "0")  # 400+400+1
    assert decode_ascii("0f" * 3, 3, 3) == (b"\x0f" * 3, "hex")  # lower-case digits are hex too


# --- what a printer drops --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "change", "kind"),
    [
        ("crc", {"data": lambda d: d[:-1] + (b"0" if d[-1:] != b"0" else b"1")}, "crc"),
        (
            "base64 changed",
            {"data": lambda d: d[:10] + (b"B" if d[10:11] == b"A" else b"A") + d[11:]},
            "crc",
        ),
        ("one row more", {"b": 13, "c": 13}, "byte_count"),
        ("one row less", {"b": -13, "c": -13}, "byte_count"),
        ("b neither total nor length", {"b": 1}, "byte_count"),
        ("c not whole rows", {"b": 1, "c": 1}, "byte_count"),
    ],
)
def test_a_bad_z64_graphic_is_dropped_and_counted(
    sim: PrinterSimulator, out: Path, name: str, change: dict[str, Any], kind: str
) -> None:
    good = encode_zpl(small_label())
    with connect(sim) as conn:
        conn.sendall(tamper(good, **change) + good + b"~HS")  # the stream stays in step
        read_until(conn, lambda data: data.count(b"\x03") >= 3)
    [label] = sim.wait_printed(1)
    assert label.seq == 1 and sim.odometer == 1  # only the good one
    [error] = sim.errors
    assert error.kind == kind, error
    assert error.peer is not None and error.peer.startswith("127.0.0.1:")
    assert sorted(p.name for p in out.iterdir()) == ["label-000001.json", "label-000001.png"]


@pytest.mark.parametrize(
    ("compression", "change"),
    [
        ("hex", {"data": lambda d: d[:-2]}),
        ("hex", {"data": lambda d: d + b"00"}),
        ("acs", {"data": lambda d: d[:-1]}),  # the last row ends early
        ("acs", {"data": lambda d: d + b","}),  # one row more
        ("acs", {"b": 13, "c": 13}),
    ],
)
def test_wrong_byte_counts_in_hex_and_acs_are_dropped(
    sim: PrinterSimulator, compression: Compression, change: dict[str, Any]
) -> None:
    send(sim, tamper(encode_zpl(small_label(), compression=compression), **change))
    assert sim.engine.wait(lambda: sim.engine.error_total == 1, 5)
    assert [e.kind for e in sim.errors] == ["byte_count"]
    assert sim.printed == [] and sim.odometer == 0


def test_graphic_errors_without_a_printer() -> None:
    with pytest.raises(GraphicError) as bad_char:
        parse_gf("A,18,18,3,0F,X!")
    assert bad_char.value.kind == "syntax"
    with pytest.raises(GraphicError) as colon_inside_a_row:
        parse_gf("A,6,6,3,0F:,")
    assert colon_inside_a_row.value.kind == "syntax"
    with pytest.raises(GraphicError) as bomb:
        parse_gf("A,99999999,99999999,1,00")
    assert bomb.value.kind == "byte_count"
    with pytest.raises(GraphicError) as compressed_binary:
        parse_gf("C,2,2,1,", b"\x00\x01")
    assert compressed_binary.value.kind == "unsupported"


def test_a_format_cut_off_by_the_connection_is_an_error(sim: PrinterSimulator) -> None:
    send(sim, encode_zpl(small_label()).split(b"^XZ")[0])
    assert sim.engine.wait(lambda: sim.engine.error_total == 1, 5)
    assert [e.kind for e in sim.errors] == ["incomplete_format"]
    assert sim.odometer == 0


def test_commands_it_does_not_draw_print_a_blank_label_with_a_warning(
    sim: PrinterSimulator,
) -> None:
    send(sim, b"^XA^PW100^LL50^MNY^PR4^FO10,10^A0N,30,30^FDHello^FS^XZ")
    [label] = sim.wait_printed(1)
    assert_same(label.image, Image.new("1", (100, 50), 1))  # blank
    assert label.compression is None
    assert label.warnings == ("^A0 ignored: the simulator draws ^GF graphics only",
                              "^FD ignored: the simulator draws ^GF graphics only")  # fmt: skip


# --- status answers --------------------------------------------------------------------------


def test_host_status_in_the_normal_state(sim: PrinterSimulator) -> None:
    assert ask(sim, b"~HS", etx=3) == HS_NORMAL_203
    assert ask(sim, b"~HQES") == (
        b"\x02\r\n\r\n  PRINTER STATUS                            \r\n"
        b"   ERRORS:         0 00000000 00000000      \r\n"
        b"   WARNINGS:       0 00000000 00000000      \r\n\x03"
    )


def test_host_status_and_error_bits_follow_the_conditions(sim: PrinterSimulator) -> None:
    cases: list[tuple[dict[str, bool], tuple[int, int], str]] = [
        ({"paper_out": True}, (0, 1), "00000001"),
        ({"paused": True}, (0, 2), "00010000"),
        ({"head_open": True}, (1, 2), "00000004"),
        ({"ribbon_out": True}, (1, 3), "00000002"),
    ]
    for condition, (line, index), bits in cases:
        sim.set_condition(**condition)
        fields = host_status(sim)
        assert fields[line][index] == "1", (condition, fields)
        assert sum(f == "1" for f in fields[0][1:3] + fields[1][2:4]) == 1  # only that flag
        assert hqes(sim) == ("1", bits)
        sim.set_condition(**{name: False for name in condition})
    sim.set_condition(paper_out=True, head_open=True, paused=True)
    assert hqes(sim) == ("1", "00010005")
    sim.set_condition(paper_out=False, head_open=False, paused=False)
    assert hqes(sim) == ("0", "00000000")
    assert ask(sim, b"~HS", etx=3) == HS_NORMAL_203


def test_partial_format_flag_and_a_query_inside_a_format(sim: PrinterSimulator) -> None:
    job = encode_zpl(small_label())
    head, rest = job[:20], job[20:]
    with connect(sim) as conn:
        conn.sendall(head + b"~HS")  # answered at once, the format stays open
        answer = read_until(conn, lambda data: data.count(b"\x03") >= 3)
        assert answer.split(b",")[7] == b"1"  # h: partial format in progress
        conn.sendall(rest + b"~HS")
        answer = read_until(conn, lambda data: data.count(b"\x03") >= 3)
        assert answer.split(b",")[7] == b"0"
    [label] = sim.wait_printed(1)
    assert_same(label.image, small_label())


def test_host_identification() -> None:
    with PrinterSimulator(port=0) as sim:
        assert ask(sim, b"~HI") == b"\x02ZT411-203dpi,V92.21.39Z,8,8176KB\x03"
    with PrinterSimulator(port=0, dpi=300, model="ZD621-300dpi") as sim:
        assert ask(sim, b"~HI") == b"\x02ZD621-300dpi,V92.21.39Z,12,8176KB\x03"


def test_sgd_getvar(sim: PrinterSimulator) -> None:
    assert getvar(sim, "odometer.total_label_count") == b'"0"'
    assert getvar(sim, "no.such.setting") == b'"?"'
    assert getvar(sim, "device.languages") == b'"zpl"'
    host = getvar(sim, "device.host_status").strip(b'"').decode().split(",")
    assert host == [field for line in host_status(sim) for field in line]
    with connect(sim) as conn:  # answered at the closing quote, no line end needed
        conn.sendall(b'! U1 getvar "odometer.total_label_count"')
        assert read_until(conn, lambda data: data.count(b'"') >= 2) == b'"0"'


# --- conditions: held, printed later, slow, off the network ----------------------------------


def test_out_of_paper_holds_labels_until_refilled(sim: PrinterSimulator, out: Path) -> None:
    sim.set_condition(paper_out=True)
    send(sim, encode_zpl(small_label(), copies=2))
    sim.wait_until(lambda status: status.formats_in_buffer == 1)
    fields = host_status(sim)
    assert (fields[0][1], fields[0][4], fields[1][8]) == ("1", "001", "00000000")
    time.sleep(0.2)
    assert sim.printed == [] and sim.odometer == 0 and not out.exists()
    assert getvar(sim, "odometer.total_label_count") == b'"0"'

    sim.set_condition(paper_out=False)
    [label] = sim.wait_printed(1)
    assert label.copies == 2 and sim.odometer == 2
    assert getvar(sim, "odometer.total_label_count") == b'"2"'
    assert host_status(sim)[0][1:5] == ["0", "0", "0057", "000"]


def test_pause_and_resume_over_the_wire(sim: PrinterSimulator) -> None:
    with connect(sim) as conn:
        conn.sendall(b"~PP" + encode_zpl(small_label()) + b"~HS")
        answer = read_until(conn, lambda data: data.count(b"\x03") >= 3)
        assert answer.startswith(b"\x02030,0,1,0057,001,")  # paused, one format held
        assert sim.printed == []
        conn.sendall(b"~PS")
        sim.wait_printed(1)
    assert sim.odometer == 1 and not sim.conditions.paused


def test_head_open_holds_and_cancel_all_drops_the_buffer(sim: PrinterSimulator) -> None:
    sim.set_condition(head_open=True)
    send(sim, encode_zpl(small_label()) * 2)
    sim.wait_until(lambda status: status.formats_in_buffer == 2)
    send(sim, b"~JA")
    sim.wait_until(lambda status: status.formats_in_buffer == 0)
    sim.set_condition(head_open=False)
    time.sleep(0.1)
    assert sim.printed == [] and sim.odometer == 0


def test_slow_printing_counts_down_the_batch_and_stops_when_paper_runs_out(
    sim: PrinterSimulator,
) -> None:
    sim.set_condition(slow_seconds=0.2)
    started = time.monotonic()
    send(sim, encode_zpl(small_label(), copies=3))
    sim.wait_until(lambda status: status.odometer == 1)
    sim.set_condition(paper_out=True)  # during the second copy: it finishes, the third waits
    sim.wait_until(lambda status: status.odometer == 2)
    time.sleep(0.3)
    fields = host_status(sim)
    assert (fields[0][1], fields[0][4], fields[1][8]) == ("1", "000", "00000001")
    assert sim.printed == [] and sim.odometer == 2
    sim.set_condition(paper_out=False)
    [label] = sim.wait_printed(1)
    assert label.copies == 3 and sim.odometer == 3
    assert time.monotonic() - started >= 0.6


def test_stop_and_start_again(out: Path) -> None:
    sim = PrinterSimulator(port=0, out_dir=out).start()
    port = sim.port
    send(sim, encode_zpl(small_label()))
    sim.wait_printed(1)
    sim.set_condition(paused=True)
    send(sim, encode_zpl(small_label()))
    sim.wait_until(lambda status: status.formats_in_buffer == 1)
    sim.stop()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=2)
    sim.set_condition(paused=False)
    sim.start()
    try:
        assert sim.port == port and sim.odometer == 1  # the held label was lost with the power
        assert sim.snapshot().formats_in_buffer == 0
        send(sim, encode_zpl(small_label(), copies=2))
        printed = sim.wait_printed(2)
        assert [label.seq for label in printed] == [1, 3] and sim.odometer == 3
    finally:
        sim.stop()
    assert first_free_seq(out) == 4  # a new run continues after the files: none is overwritten


def test_unreachable_refuses_connections_until_cleared(sim: PrinterSimulator) -> None:
    with connect(sim) as open_connection:
        sim.set_condition(unreachable=True)
        assert open_connection.recv(10) == b""  # dropped
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", sim.port), timeout=2)
    sim.set_condition(unreachable=False)
    assert ask(sim, b"~HS", etx=3) == HS_NORMAL_203


# --- control: HTTP endpoint and the command line ---------------------------------------------


def http(port: int, method: str, path: str, body: Any = None, content_type: str = "") -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    if content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_http_control_endpoint() -> None:
    with PrinterSimulator(port=0, control_port=0) as sim:
        assert sim.control_port
        status, body = http(sim.control_port, "GET", "/status")
        assert status == 200 and body["port"] == sim.port and body["held"] is None
        status, body = http(
            sim.control_port, "POST", "/condition", {"paper_out": True}, "application/json"
        )
        assert status == 200 and body["conditions"]["paper_out"] and body["held"] == "paper out"
        assert host_status(sim)[0][1] == "1"
        assert http(sim.control_port, "POST", "/condition", {"paper_out": True})[0] == 415
        bad = http(sim.control_port, "POST", "/condition", {"on_fire": True}, "application/json")
        assert bad[0] == 400 and "on_fire" in bad[1]["error"]
        wrong_type = http(sim.control_port, "POST", "/condition", {"paused": 1}, "application/json")
        assert wrong_type[0] == 400
        assert http(sim.control_port, "GET", "/nothing")[0] == 404


def test_command_line(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("etikett-printer-sim")
    module = [sys.executable, "-m", "etikett_runner.printer_sim.cli"]
    command = [str(script)] if script.exists() else module
    port, control = free_port(), free_port()
    arguments = ["--port", str(port), "--out", str(tmp_path), "--control-port", str(control)]
    process = subprocess.Popen(
        [*command, *arguments, "--dpi", "300"], stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except ConnectionRefusedError:
                assert process.poll() is None and time.monotonic() < deadline
                time.sleep(0.05)
        with conn:
            conn.sendall(encode_zpl(small_label(), copies=2) + b"~HI")
            assert read_until(conn, lambda data: b"\x03" in data).startswith(b"\x02ZT411-300dpi,")
        deadline = time.monotonic() + 5
        while not (tmp_path / "label-000001.json").exists():
            assert time.monotonic() < deadline
            time.sleep(0.02)
        assert http(control, "GET", "/status")[1]["odometer"] == 2
    finally:
        process.terminate()
        _, log = process.communicate(timeout=10)
    assert process.returncode == 0, log
    assert "label 1 printed: 2 copies, odometer 2" in log and "stopped" in log
