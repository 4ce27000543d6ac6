"""TSPL and EPL jobs: headers, byte counts and bit sense (0 = black), round trip to the raster."""

from __future__ import annotations

import pytest
from PIL import Image

from etikett_engine.render import encode_epl, encode_tspl, render

from .decoders import DecodeError, decode_epl, decode_tspl
from .samples import GS1_128, barcode, label, logistics_label, text

LABELS = {
    "logistics-203": (render(logistics_label(203), {}), 203),
    "odd-300": (
        render(
            label(
                [
                    text("t", "TSPL/EPL ÄÖÜ ß €", size_pt=8, rotation=90, x_mm=1, y_mm=1),
                    barcode(
                        "b", "gs1-128", GS1_128, x_mm=8, y_mm=2, height_mm=6, module_width_dots=2
                    ),
                ],
                width_mm=60.3,
                height_mm=12.7,
                dpi=300,
            ),
            {},
        ),
        300,
    ),
}


@pytest.mark.parametrize("name", sorted(LABELS))
def test_tspl_decodes_to_the_rendered_raster(name):
    image, dpi = LABELS[name]
    job = decode_tspl(encode_tspl(image, copies=2, dpi=dpi), dpi)
    assert (job.width, job.height, job.copies) == (image.width, image.height, 2)
    assert job.image().tobytes() == image.tobytes()


@pytest.mark.parametrize("name", sorted(LABELS))
def test_epl_decodes_to_the_rendered_raster(name):
    image, dpi = LABELS[name]
    job = decode_epl(encode_epl(image, copies=4, dpi=dpi))
    assert (job.width, job.height, job.copies) == (image.width, image.height, 4)
    assert job.image().tobytes() == image.tobytes()


def test_tspl_header():
    image, _ = LABELS["logistics-203"]
    job = encode_tspl(image, dpi=203)
    head = b"SIZE 101.6 mm,152.4 mm\r\nGAP 3 mm,0 mm\r\nCLS\r\nBITMAP 0,0,102,1218,0,"
    tail = b"\r\nPRINT 1,1\r\n"
    assert job.startswith(head) and job.endswith(tail)
    assert len(job) == len(head) + 102 * 1218 + len(tail)


def test_epl_header():
    image, _ = LABELS["logistics-203"]
    job = encode_epl(image, dpi=203, gap_mm=3)
    assert job.startswith(b"\r\nN\r\nq812\r\nQ1218,24\r\nGW0,0,102,1218,")
    assert job.endswith(b"\r\nP1\r\n")


@pytest.mark.parametrize("encode", [encode_tspl, encode_epl])
def test_a_zero_bit_prints_black_and_padding_stays_white(encode):
    image = Image.new("1", (10, 1), 1)
    image.putpixel((0, 0), 0)
    job = encode(image, dpi=203)
    # 10 dots: 2 bytes; dot 0 black (bit 0), dots 1-9 white, 6 padding bits white (1).
    assert b",\x7f\xff\r\n" in job


def test_the_strict_decoders_refuse_a_short_bitmap():
    image, dpi = LABELS["odd-300"]
    job = encode_tspl(image, dpi=dpi)
    with pytest.raises(DecodeError):
        decode_tspl(job.replace(b"\r\nPRINT", b"\r\nPRINT", 1)[:-20] + b"\r\nPRINT 1,1\r\n", dpi)
    with pytest.raises(DecodeError):
        decode_epl(encode_epl(image, dpi=dpi)[:-8] + b"\r\nP1\r\n")
