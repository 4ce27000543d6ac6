"""Raw jobs carry a printer language, framed as that language frames it: what the service's own
encoders make passes, and what another protocol would read as a request does not."""

from __future__ import annotations

import pytest
from PIL import Image

from etikett_engine.printer_data import refusal
from etikett_engine.render.epl import encode_epl
from etikett_engine.render.tspl import encode_tspl


@pytest.mark.parametrize(
    ("language", "data"),
    [
        ("zpl", b"^XA^FO10,10^GB100,100,4^FS^XZ"),
        ("zpl", b"\xef\xbb\xbf\r\n^XA^FDGET / HTTP/1.0 is only text here^FS^XZ\r\n^XA^XZ"),
        ("zpl", b"~HS"),
        ("zpl", b"~JA\r\n^XA^PQ2^XZ\r\n~HQES\r\n"),
        ("zpl", b'! U1 setvar "device.languages" "zpl"\r\n^XA^XZ'),
        ("zpl", b'! U1 getvar "odometer.total_label_count"\r\n'),
        ("zpl", b"^xa^fdlower case works too^fs^xz"),
        ("zpl", b"^XA^GFA,4,4,1,\x00\xff\x10\n^FS^XZ"),
        ("tspl", b"SIZE 50 mm,30 mm\r\nGAP 3 mm,0 mm\r\nCLS\r\nPRINT 1,1\r\n"),
        ("epl", b"\r\nN\r\nq400\r\nQ240,24\r\nP1\r\n"),
    ],
)
def test_printer_languages_pass(language: str, data: bytes) -> None:
    assert refusal(data, language) is None


def test_what_the_service_encodes_passes() -> None:
    from etikett_engine.render.zpl import encode_zpl

    image = Image.new("1", (64, 32), 1)
    assert refusal(encode_tspl(image), "tspl") is None
    assert refusal(encode_epl(image), "epl") is None
    for compression in ("z64", "acs", "hex"):
        assert refusal(encode_zpl(image, copies=2, compression=compression), "zpl") is None


@pytest.mark.parametrize(
    ("language", "data", "why"),
    [
        ("zpl", b"GET /admin HTTP/1.1\r\nHost: 10.0.0.5\r\n\r\n", "HTTP request"),
        ("zpl", b"^XA^FD\r\nPOST /api/reset HTTP/1.1\r\nHost: x\r\n^FS^XZ", "HTTP request"),
        ("zpl", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", "does not start"),
        ("zpl", b"*1\r\n$8\r\nFLUSHALL\r\n", "does not start"),
        ("zpl", b"^XA^XZ\r\nFLUSHALL\r\n", "outside"),
        ("zpl", b"^XA^FDno end", "not closed"),
        ("zpl", b"~HS\r\nSET key value\r\n", "outside"),
        ("zpl", b"", "no bytes"),
        ("zpl", b"  \r\n ", "whitespace"),
        ("tspl", b"^XA^XZ", "TSPL"),
        ("tspl", b"HELO mail.example\r\n", "TSPL"),
        ("epl", b"EHLO mail.example\r\n", "EPL2"),
        ("epl", b"USER admin\r\n", "EPL2"),
        ("pcl", b"\x1bE", "no printer language"),
    ],
)
def test_other_protocols_are_refused(language: str, data: bytes, why: str) -> None:
    reason = refusal(data, language)
    assert reason is not None and why in reason, reason
