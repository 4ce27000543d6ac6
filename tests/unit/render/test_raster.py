"""The raster: exact size in dots per dpi, mm → dots placement, shapes, images, PNG previews."""

from __future__ import annotations

import base64
import io
import resource
import struct

import pytest
from PIL import Image

from etikett_engine.render import ImageInvalid, LabelTooLarge, dots, render, to_png
from etikett_engine.render.units import mm_to_dots

from .samples import gradient, label, logistics_label, png_base64, text


@pytest.mark.parametrize(
    ("width_mm", "height_mm", "dpi", "expected"),
    [
        (101.6, 152.4, 203, (812, 1218)),
        (101.6, 152.4, 300, (1200, 1800)),
        (101.6, 152.4, 600, (2400, 3600)),
        (57.3, 20.1, 203, (458, 161)),
        (57.3, 20.1, 300, (677, 237)),
        (57.3, 20.1, 600, (1354, 475)),
    ],
)
def test_the_raster_is_exactly_the_label_in_dots(width_mm, height_mm, dpi, expected):
    image = render(label([], width_mm=width_mm, height_mm=height_mm, dpi=dpi), {})
    assert image.mode == "1"
    assert dots(image) == image.size == expected
    assert expected == (round(width_mm / 25.4 * dpi), round(height_mm / 25.4 * dpi))
    assert image.getbbox() == (0, 0, *expected)  # all white (white dots are nonzero)


def box(**fields) -> dict:
    return {
        "id": "b",
        "type": "box",
        "x_mm": 5,
        "y_mm": 4,
        "width_mm": 20,
        "height_mm": 10,
        **fields,
    }


def black(image: Image.Image, x: int, y: int) -> bool:
    return image.getpixel((x, y)) == 0


@pytest.mark.parametrize("dpi", [203, 300, 600])
def test_a_box_lands_on_its_mm_position_in_dots(dpi):
    image = render(label([box(line_mm=1)], dpi=dpi), {})
    x, y = mm_to_dots(5, dpi), mm_to_dots(4, dpi)
    w, h, line = mm_to_dots(20, dpi), mm_to_dots(10, dpi), mm_to_dots(1, dpi)
    inverted = Image.eval(image.convert("L"), lambda v: 255 - v)
    assert inverted.getbbox() == (x, y, x + w, y + h)
    assert black(image, x + line - 1, y + h // 2) and not black(image, x + line, y + h // 2)
    assert not black(image, x + w // 2, y + h // 2)


def test_filled_and_rounded_boxes():
    filled = render(label([box(fill=True)]), {})
    x, y, w, h = mm_to_dots(5, 203), mm_to_dots(4, 203), mm_to_dots(20, 203), mm_to_dots(10, 203)
    assert filled.crop((x, y, x + w, y + h)).getbbox() is None  # every dot black
    rounded = render(label([box(corner_radius_mm=3, fill=True)]), {})
    assert not black(rounded, x, y) and black(rounded, x + w // 2, y)


@pytest.mark.parametrize(
    ("rotation", "size"), [(0, (80, 4)), (90, (4, 80)), (180, (80, 4)), (270, (4, 80))]
)
def test_a_line_runs_right_or_down(rotation, size):
    line = {
        "id": "l",
        "type": "line",
        "x_mm": 3,
        "y_mm": 2,
        "length_mm": 80 / 8 * 1.00098,
        "thickness_mm": 4 / 8 * 1.00098,
        "rotation": rotation,
    }
    image = render(label([line]), {})
    x, y = mm_to_dots(3, 203), mm_to_dots(2, 203)
    inverted = Image.eval(image.convert("L"), lambda v: 255 - v)
    assert inverted.getbbox() == (x, y, x + size[0], y + size[1])


def test_ellipses():
    shape = {"id": "e", "type": "ellipse", "x_mm": 5, "y_mm": 5, "width_mm": 20, "height_mm": 10}
    outline = render(label([shape]), {})
    filled = render(label([{**shape, "fill": True}]), {})
    cx, cy = mm_to_dots(15, 203), mm_to_dots(10, 203)
    assert not black(outline, cx, cy) and black(filled, cx, cy)
    corner = (mm_to_dots(5, 203) + 1, mm_to_dots(5, 203) + 1)
    assert not black(filled, *corner)
    assert black(outline, mm_to_dots(5, 203), cy)


def test_objects_only_add_black_and_are_cut_at_the_edges():
    document = label(
        [
            box(fill=True),
            text("t", "Über", x_mm=6, y_mm=5, size_pt=14),  # black on black: stays black
            box(id="tl", x_mm=-5, y_mm=-5, width_mm=10, height_mm=10, fill=True),  # off the top
            box(id="br", x_mm=45, y_mm=25, width_mm=10, height_mm=10, fill=True),  # off the end
        ]
    )
    image = render(document, {})
    x, y, w, h = mm_to_dots(5, 203), mm_to_dots(4, 203), mm_to_dots(20, 203), mm_to_dots(10, 203)
    assert image.crop((x, y, x + w, y + h)).getbbox() is None
    assert black(image, 0, 0) and black(image, image.width - 1, image.height - 1)


def image_object(content: str, **fields) -> dict:
    # 64 x 16 dots at 203 dpi: the source gradient is not resampled.
    return {
        "id": "img",
        "type": "image",
        "x_mm": 1,
        "y_mm": 1,
        "width_mm": 64 / 203 * 25.4,
        "height_mm": 16 / 203 * 25.4,
        "content_base64": content,
        **fields,
    }


def test_images_are_dithered():
    image = render(label([image_object(png_base64(gradient()))]), {})
    x, y = mm_to_dots(1, 203), mm_to_dots(1, 203)
    tile = image.crop((x, y, x + 64, y + 16))
    columns = [sum(black(tile, c, r) for r in range(16)) for c in range(64)]
    assert columns[0] == 16 and columns[-1] == 0
    middle = columns[24:40]
    assert all(0 < count < 16 for count in middle)  # a mix of dots, not a hard edge
    assert 0.35 < sum(middle) / (16 * 16) < 0.65


def test_images_with_a_threshold_have_a_hard_edge():
    image = render(
        label([image_object(png_base64(gradient()), dither="threshold", threshold=128)]), {}
    )
    x, y = mm_to_dots(1, 203), mm_to_dots(1, 203)
    tile = image.crop((x, y, x + 64, y + 16))
    values = gradient().getpixel
    for column in range(64):
        assert black(tile, column, 5) == (values((column, 5)) < 128)


def test_jpeg_and_transparent_png_are_accepted():
    jpeg = png_base64(gradient().convert("RGB"), "JPEG")
    assert render(label([image_object(jpeg)]), {}).getbbox() is not None
    clear = Image.new("RGBA", (64, 16), (0, 0, 0, 0))  # transparent black: paper
    image = render(label([image_object(png_base64(clear))]), {})
    assert Image.eval(image.convert("L"), lambda v: 255 - v).getbbox() is None


@pytest.mark.parametrize(
    "content",
    [
        "not base64!",
        base64.b64encode(b"\x89PNG\r\n\x1a\n broken").decode(),
        base64.b64encode(b"GIF89a").decode(),
        png_base64(gradient(), "GIF"),
    ],
)
def test_undecodable_images_are_a_422(content):
    with pytest.raises(ImageInvalid) as raised:
        render(label([image_object(content)]), {})
    assert (raised.value.status, raised.value.code) == (422, "label.image_invalid")
    assert raised.value.params["object_id"] == "img"


@pytest.mark.parametrize(
    "document",
    [
        logistics_label(203),  # 812 dots: rows end within a byte
        label([text("t", "Etikett", x_mm=2, y_mm=2, size_pt=9)], width_mm=57.3, height_mm=20.1),
    ],
    ids=["812-dots", "458-dots"],
)
def test_the_png_preview_is_the_raster_in_one_bit(document):
    image = render(document, {})
    png = to_png(image)
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">IIBB", png[16:26]) == (*image.size, 1, 0)
    again = Image.open(io.BytesIO(png))
    assert again.mode == "1" and again.tobytes() == image.tobytes()


def test_a_png_row_as_wide_as_whole_bytes_has_no_padding():
    image = Image.new("1", (16, 3), 1)
    image.putpixel((0, 0), 0)
    image.putpixel((15, 2), 0)
    again = Image.open(io.BytesIO(to_png(image)))
    assert again.size == (16, 3) and again.tobytes() == image.tobytes()


def test_labels_after_the_first_reuse_the_memory_of_the_last():
    """Pillow's memory blocks are kept for the next label: twenty 4 × 6 in previews touch no
    fresh memory (each would fault in its ≈ 250 pages of 4 KB otherwise, ≈ 10,000 in all)."""
    document = logistics_label(203)
    for _ in range(3):
        to_png(render(document, {}))
    before = resource.getrusage(resource.RUSAGE_THREAD).ru_minflt
    for _ in range(20):
        to_png(render(document, {}))
    assert resource.getrusage(resource.RUSAGE_THREAD).ru_minflt - before < 1_000


def test_importing_the_label_model_does_not_load_the_renderer():
    import subprocess
    import sys

    code = (
        "import sys, etikett_engine.dsl.label, etikett_engine.cel; "
        "print(any(m.startswith(('PIL', 'zint', 'fontpkg', 'etikett_engine.render')) "
        "for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize(
    ("document", "object_id"),
    [
        (label([], width_mm=1000, height_mm=1000, dpi=600), None),
        (label([box(width_mm=1000, height_mm=1000)], dpi=600), "b"),
        (
            label(
                [
                    {
                        "id": "q",
                        "type": "barcode",
                        "symbology": "qr",
                        "x_mm": 0,
                        "y_mm": 0,
                        "content": "x" * 2000,
                        "module_width_dots": 100,
                    }
                ]
            ),
            "q",
        ),
        (label([text("t", "Sehr lang " * 1000, size_pt=400)], dpi=600), "t"),
        (
            label(
                [text("t", "Sehr lang " * 1000, size_pt=400, width_mm=20, height_mm=20)], dpi=600
            ),
            "t",
        ),
    ],
)
def test_rasters_beyond_the_limit_are_refused_before_they_are_allocated(document, object_id):
    with pytest.raises(LabelTooLarge) as raised:
        render(document, {})
    assert (raised.value.status, raised.value.code) == (422, "label.too_large")
    assert raised.value.params["object_id"] == object_id
