"""ZPL ^GFA jobs decode, with a strict decoder, to exactly the rendered raster."""

from __future__ import annotations

import re

import pytest
from PIL import Image, ImageDraw

from etikett_engine.render import encode_zpl, render
from etikett_engine.render.zpl import acs, repeat_count

from .decoders import DecodeError, decode_acs, decode_zpl
from .samples import GS1_128, GS1_DM, barcode, label, logistics_label, text


def _labels() -> dict[str, Image.Image]:
    odd = label(
        [
            text("t", "Odd 457 dots: ÄÖÜ äöü ß €", size_pt=9, width_mm=50, wrap=True),
            {
                "id": "l",
                "type": "line",
                "x_mm": 0,
                "y_mm": 0,
                "length_mm": 57.3,
                "thickness_mm": 0.2,
            },
            {
                "id": "edge",
                "type": "box",
                "x_mm": 55,
                "y_mm": 5,
                "width_mm": 10,
                "height_mm": 5,
                "fill": True,
            },  # runs past the right edge, into the last partial byte
        ],
        width_mm=57.3,
        height_mm=20.1,
    )
    rotated = label(
        [
            text("r0", "Rot 0", x_mm=2, y_mm=2, size_pt=10),
            text("r90", "Rot 90", x_mm=30, y_mm=2, size_pt=10, rotation=90),
            text("r180", "Rot 180", x_mm=2, y_mm=15, size_pt=10, rotation=180),
            text("r270", "Rot 270", x_mm=40, y_mm=2, size_pt=10, rotation=270),
            barcode("c", "code128", "ROT-90", x_mm=2, y_mm=22, rotation=90, height_mm=5),
        ],
        width_mm=50.3,
        height_mm=40,
        dpi=300,
    )
    codes = label(
        [
            barcode("a", "gs1-128", GS1_128, x_mm=3, y_mm=3, height_mm=10),
            barcode("b", "gs1-datamatrix", GS1_DM, x_mm=3, y_mm=22),
            barcode("c", "qr", "https://etikett.example/p/42", x_mm=25, y_mm=22),
            barcode("d", "pdf417", "PDF417 data 1234567890", x_mm=3, y_mm=45),
            barcode("e", "ean13", "400638133393", x_mm=50, y_mm=22),
            barcode("f", "itf14", "1540014128876", x_mm=3, y_mm=62, height_mm=8),
        ],
        width_mm=101.6,
        height_mm=80.3,
    )
    return {
        "logistics-203": render(logistics_label(203), {}),
        "odd-width": render(odd, {}),
        "rotated-300": render(rotated, {}),
        "barcodes": render(codes, {}),
    }


LABELS = _labels()


@pytest.mark.parametrize("name", sorted(LABELS))
@pytest.mark.parametrize("compression", ["z64", "acs", "hex"])
def test_the_job_decodes_to_the_rendered_raster(name, compression):
    image = LABELS[name]
    job = decode_zpl(encode_zpl(image, copies=3, compression=compression))
    assert (job.width, job.height, job.copies) == (image.width, image.height, 3)
    assert job.row_bytes == (image.width + 7) // 8
    assert job.image().tobytes() == image.tobytes()


def test_odd_widths_are_covered():
    widths = {name: image.width % 8 for name, image in LABELS.items()}
    assert widths["odd-width"] and widths["rotated-300"] and widths["barcodes"]


def test_the_header_is_complete_and_counts_the_uncompressed_bytes():
    image = LABELS["odd-width"]
    job = encode_zpl(image).decode("ascii")
    total = (image.width + 7) // 8 * image.height
    assert job.startswith(f"^XA\n^PW{image.width}\n^LL{image.height}\n^LH0,0\n^FO0,0^GFA,")
    assert f"^GFA,{total},{total},{(image.width + 7) // 8},:Z64:" in job
    assert job.endswith("^FS\n^PQ1\n^XZ\n")


def test_black_dots_are_one_bits():
    image = Image.new("1", (16, 2), 1)
    image.putpixel((0, 0), 0)
    image.putpixel((15, 1), 0)
    job = encode_zpl(image, compression="hex").decode()
    assert ",80000001^FS" in job


def test_the_strict_decoder_refuses_a_wrong_crc_or_count():
    job = encode_zpl(LABELS["odd-width"]).decode("ascii")
    crc = re.search(r":([0-9A-F]{4})\^FS", job)
    assert crc is not None
    wrong = f"{(int(crc[1], 16) ^ 1):04X}"
    with pytest.raises(DecodeError, match="CRC"):
        decode_zpl(job.replace(f":{crc[1]}^FS", f":{wrong}^FS").encode())
    with pytest.raises(DecodeError):
        decode_zpl(re.sub(r"\^GFA,(\d+),", lambda m: f"^GFA,{int(m[1]) + 1},", job).encode())


def test_zebrafy_makes_the_same_z64_data():
    """The same rows: each Z64 field's CRC fits its text and both inflate to the same bytes (the
    compressed streams differ: ours are ISA-L's, zebrafy's are zlib's)."""
    import base64
    import binascii
    import zlib

    import zebrafy

    image = LABELS["logistics-203"]
    theirs = zebrafy.ZebrafyImage(image, format="Z64", complete_zpl=False).to_zpl()
    ours = encode_zpl(image).decode("ascii")
    # ^GFA,b,c,d: the first count is where the two differ by design (see etikett_engine.render.zpl).
    field = re.compile(r"\^GFA,\d+,(\d+),(\d+),:Z64:([^:]+):([0-9A-F]{4})")

    def rows(job: str) -> tuple[tuple[str, ...], bytes]:
        found = field.search(job)
        assert found is not None
        assert f"{binascii.crc_hqx(found[3].encode(), 0):04X}" == found[4]
        return found.groups()[:2], zlib.decompress(base64.b64decode(found[3]))

    assert rows(ours) == rows(theirs)
    assert len(rows(ours)[1]) == int(rows(ours)[0][0])


@pytest.mark.parametrize(
    ("count", "prefix"),
    [
        (1, "G"),
        (2, "H"),
        (19, "Y"),
        (20, "g"),
        (21, "gG"),
        (39, "gY"),
        (40, "h"),
        (399, "yY"),
        (400, "z"),
        (401, "zG"),
        (419, "zY"),
        (420, "zg"),
        (800, "zz"),
        (1000, "zzp"),
    ],
)
def test_acs_repeat_counts(count, prefix):
    assert repeat_count(count) == prefix


def test_acs_uses_row_fills_repeats_and_counts():
    image = Image.new("1", (96, 5), 1)
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 1, 95, 1), fill=0)  # a full black row: "!"
    draw.rectangle((0, 2, 95, 2), fill=0)  # the same again: ":"
    draw.rectangle((0, 3, 39, 3), fill=0)  # 10 F then zeros: "PF,"
    data = acs(image.tobytes("raw", "1;I"), 12)
    assert data == ",!:PF,,"
    assert decode_acs(data, 60, 12) == image.tobytes("raw", "1;I")


@pytest.mark.parametrize(
    "data", ["G", "GG,", ":", "0" * 23 + "," + "0" * 23, "X" * 24, "0" * 25 + ",", "G,"]
)
def test_the_acs_decoder_refuses_bad_grammar(data):
    with pytest.raises(DecodeError):
        decode_acs(data, 12, 12)


def test_copies_must_be_positive():
    with pytest.raises(ValueError):
        encode_zpl(LABELS["odd-width"], copies=0)
