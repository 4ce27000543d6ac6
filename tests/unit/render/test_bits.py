"""Raster rows as printer bytes, checked dot by dot against the image: most significant bit
leftmost, each row padded to whole bytes with dots that do not print."""

from __future__ import annotations

import random

import pytest
from PIL import Image

from etikett_engine.render.bits import black_is_one, black_is_zero, bytes_per_row


def _random_raster(width: int, height: int, seed: int) -> Image.Image:
    chance = random.Random(seed)
    image = Image.new("1", (width, height), 1)
    for y in range(height):
        for x in range(width):
            if chance.random() < 0.4:
                image.putpixel((x, y), 0)  # black
    return image


def _rows(image: Image.Image, black: int) -> bytes:
    """The packed rows, one dot at a time: `black` is a black dot's bit, padding does not print."""
    packed = bytearray()
    for y in range(image.height):
        for start in range(0, bytes_per_row(image) * 8, 8):
            byte = 0
            for x in range(start, start + 8):
                is_black = x < image.width and image.getpixel((x, y)) == 0
                bit = black if is_black else 1 - black
                byte = byte << 1 | bit
            packed.append(byte)
    return bytes(packed)


@pytest.mark.parametrize("width", [1, 7, 8, 9, 15, 16, 17, 101])
def test_rows_are_the_image_dot_by_dot(width: int) -> None:
    image = _random_raster(width, 5, seed=width)
    assert black_is_one(image) == _rows(image, black=1)
    assert black_is_zero(image) == _rows(image, black=0)


def test_a_blank_and_a_black_raster() -> None:
    for fill, dot in ((1, 0), (0, 1)):
        image = Image.new("1", (13, 3), fill)
        assert black_is_one(image) == _rows(image, black=1)
        assert black_is_one(image)[:2] == bytes([0xFF * dot, 0xF8 * dot])
        assert black_is_zero(image) == _rows(image, black=0)


def test_only_label_rasters_are_packed() -> None:
    with pytest.raises(ValueError, match="mode '1'"):
        black_is_one(Image.new("L", (8, 1)))


@pytest.mark.parametrize("width", [1, 8, 13])
def test_rows_behind_lead_bytes_are_the_same_rows(width: int) -> None:
    image = _random_raster(width, 4, seed=width + 100)
    plain, row = black_is_zero(image), bytes_per_row(image)
    expected = b"".join(b"\0\0" + plain[y * row : (y + 1) * row] for y in range(image.height))
    assert black_is_zero(image, lead=2) == expected


@pytest.mark.parametrize("band_dots", [1, 20, 40, 10_000])
def test_rows_read_in_bands_are_the_same_rows(
    band_dots: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from etikett_engine.render import bits

    image = _random_raster(13, 9, seed=band_dots)
    monkeypatch.setattr(bits, "BAND_DOTS", band_dots)  # 1, 1, 3 and all 9 rows a band
    assert black_is_one(image) == _rows(image, black=1)
    assert black_is_zero(image, lead=1) == b"".join(
        b"\0" + _rows(image, black=0)[y * 2 : y * 2 + 2] for y in range(9)
    )


def test_packing_starts_no_threads() -> None:
    """NumPy's first import, by the first packing, leaves the process with its one thread: no
    OpenBLAS pool setting itself up beside the first label."""
    import os
    import subprocess
    import sys

    if (os.cpu_count() or 1) < 2:
        pytest.skip("OpenBLAS starts no pool of its own on one core")
    script = (
        "import os\n"
        "from PIL import Image\n"
        "from etikett_engine.render.bits import black_is_one\n"
        "black_is_one(Image.new('1', (16, 2), 1))\n"
        "print(len(os.listdir('/proc/self/task')))\n"
    )
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    threads = subprocess.run(
        [sys.executable, "-c", script], env=environment, capture_output=True, text=True, check=True
    ).stdout
    assert threads.strip() == "1"
