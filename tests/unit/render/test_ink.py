"""How objects reach the label (`ink`: black, white, reverse) and text placed in its box
(`valign`) or stretched (`scale_x`): what imported labels need to print as their source did."""

from __future__ import annotations

import pytest
import zxingcpp
from PIL import Image

from etikett_engine.render import render
from etikett_engine.render.preflight import preflight, render_checked
from etikett_engine.render.units import mm_to_dots

from .samples import barcode, label, text


def _box(id_: str, **fields: object) -> dict[str, object]:
    return {"id": id_, "type": "box", "x_mm": 5, "y_mm": 5, "width_mm": 30, "height_mm": 15,
            "fill": True, **fields}  # fmt: skip


def _black(image: Image.Image) -> int:
    return image.histogram()[0]


def _inked(image: Image.Image) -> tuple[int, int, int, int] | None:
    return Image.eval(image.convert("L"), lambda v: 255 - v).getbbox()


def test_reverse_text_prints_white_on_a_black_box_and_black_beside_it():
    words = text("t", "REVERSE", x_mm=3, y_mm=8, size_pt=14, ink="reverse")
    on_box = render(label([_box("b"), words]), {})
    box_only = render(label([_box("b")]), {})
    # Inside the box the letters are white: fewer black dots than the box alone ...
    left, top = mm_to_dots(5, 203), mm_to_dots(5, 203)
    region = (left, top, left + mm_to_dots(30, 203), top + mm_to_dots(15, 203))
    assert _black(on_box.crop(region)) < _black(box_only.crop(region))
    # The part of the text left of the box stays black on white paper.
    assert _black(on_box.crop((0, 0, left, on_box.height))) > 0


def test_reverse_is_exactly_xor_with_what_lies_under():
    under = render(label([_box("b")]), {})
    words = text("t", "XOR", x_mm=10, y_mm=7, size_pt=20)
    plain = render(label([words]), {})
    reversed_ = render(label([_box("b"), {**words, "ink": "reverse"}]), {})
    for x in range(under.width):
        for y in range(0, under.height, 3):
            expected = (under.getpixel((x, y)) == 0) != (plain.getpixel((x, y)) == 0)
            assert (reversed_.getpixel((x, y)) == 0) == expected


def test_reverse_past_the_edge_changes_only_the_label():
    words = text("t", "EDGE", x_mm=-2, y_mm=-1, size_pt=20, ink="reverse")
    image = render(label([words]), {})
    assert _black(image) > 0  # on white paper, reverse prints black


def test_white_clears_the_dots_under_it_and_is_never_outside():
    cleared = {**_box("w", x_mm=10, y_mm=8, width_mm=60, height_mm=5), "ink": "white"}
    image = render(label([_box("b"), cleared]), {})
    y = mm_to_dots(10, 203)
    assert image.getpixel((mm_to_dots(15, 203), y)) == 255  # cleared inside the black box
    assert image.getpixel((mm_to_dots(7, 203), y)) == 0  # the box left of the white box
    document = label([_box("b"), cleared])
    assert [f.code for f in preflight(document)] == []  # runs past the right edge: no dots there


def test_a_white_box_in_a_quiet_zone_is_not_other_ink():
    code = barcode("c", "code128", "ABC123", x_mm=12, y_mm=5, module_width_dots=2, height_mm=8)
    cleared = {**_box("w", x_mm=5, y_mm=5, width_mm=6, height_mm=8), "ink": "white"}
    document = label([code, cleared], width_mm=80)
    assert [f.code for f in preflight(document) if f.severity == "error"] == []
    image, _ = render_checked(document, {})
    assert [r.text for r in zxingcpp.read_barcodes(image)] == ["ABC123"]


@pytest.mark.parametrize(("valign", "expected_top"), [("top", 0), ("middle", 1), ("bottom", 2)])
def test_valign_places_the_lines_in_a_taller_box(valign, expected_top):
    words = text("t", "Mid", size_pt=10, height_mm=20, valign=valign)
    image = render(label([words]), {})
    box = _inked(image)
    assert box is not None
    top_of_box, box_h = mm_to_dots(2, 203), mm_to_dots(20, 203)
    free = box_h - (box[3] - box[1])
    offset = box[1] - top_of_box
    third = [offset < free / 3, free / 3 <= offset <= 2 * free / 3, offset > 2 * free / 3]
    assert third[expected_top], (offset, free)


def test_absent_valign_and_scale_draw_the_same_dots_as_before():
    words = text("t", "Same dots", size_pt=12)
    for extra in ({"valign": "top"}, {"scale_x": 1}):
        assert (
            render(label([{**words, **extra}]), {}).tobytes()
            == render(label([words]), {}).tobytes()
        )


@pytest.mark.parametrize("scale", [0.5, 1.5, 2.0])
def test_scale_x_widens_or_narrows_the_glyphs_only(scale):
    words = text("t", "WIDTH", size_pt=14)
    plain = _inked(render(label([words], width_mm=100), {}))
    scaled = _inked(render(label([{**words, "scale_x": scale}], width_mm=100), {}))
    assert plain is not None and scaled is not None
    width, height = plain[2] - plain[0], plain[3] - plain[1]
    assert scaled[2] - scaled[0] == pytest.approx(width * scale, abs=3)
    assert abs((scaled[3] - scaled[1]) - height) <= 1


def test_scaled_text_wraps_in_its_box_at_its_scaled_width():
    words = text("t", "one two three four", size_pt=10, width_mm=20, wrap=True, scale_x=2)
    image = render(label([words], width_mm=60), {})
    box = _inked(image)
    assert box is not None and box[2] - box[0] <= mm_to_dots(20, 203)
    assert [f.code for f in preflight(label([words], width_mm=60))] == []
