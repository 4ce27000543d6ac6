"""An ink painted again goes on the label by its plan (fills and pastes of its inked bands): the
same dots as one masked paste of the whole ink, in every colour, rotation and place, also past the
label's edges."""

from __future__ import annotations

import gc
import random

import pytest
from PIL import Image, ImageDraw

from etikett_engine.render import ink_plan, render
from etikett_engine.render.ink_plan import TURN, make_plan, put
from etikett_engine.render.units import BLACK, WHITE

from .samples import GS1_128, barcode, label, logistics_label, text


def _frame(width: int = 300, height: int = 200, line: int = 4) -> Image.Image:
    ink = Image.new("1", (width, height), 0)
    ImageDraw.Draw(ink).rectangle((0, 0, width - 1, height - 1), outline=255, width=line)
    return ink


def _speckles(width: int, height: int, seed: int, chance: float) -> Image.Image:
    pick = random.Random(seed)
    dots = bytes(255 if pick.random() < chance else 0 for _ in range(width * height))
    return Image.frombytes("L", (width, height), dots).convert("1", dither=Image.Dither.NONE)


def _bars(width: int = 200, height: int = 120, seed: int = 3) -> Image.Image:
    """A barcode-like ink: identical rows of bars over a few rows of speckles (its text)."""
    pick = random.Random(seed)
    row = bytes(255 if pick.random() < 0.5 else 0 for _ in range(width))
    ink = Image.frombytes("L", (width, height - 20), row * (height - 20)).convert("1")
    whole = Image.new("1", (width, height), 0)
    whole.paste(ink, (0, 0))
    whole.paste(_speckles(width, 20, seed, 0.3), (0, height - 20))
    return whole


def _blocky(seed: int) -> Image.Image:
    """Runs of rows alike, with gaps: bands of every kind (blank, few runs, many runs)."""
    pick = random.Random(seed)
    ink = Image.new("1", (97, 83), 0)
    draw = ImageDraw.Draw(ink)
    for _ in range(12):
        x, y = pick.randrange(-10, 97), pick.randrange(-10, 83)
        draw.rectangle((x, y, x + pick.randrange(1, 40), y + pick.randrange(1, 30)), fill=255)
    return ink


INKS = {
    "frame": _frame(),
    "bars": _bars(),
    "speckles": _speckles(61, 37, seed=1, chance=0.2),
    "blocky": _blocky(7),
    "blank": Image.new("1", (40, 30), 0),
    "solid": Image.new("1", (40, 30), 255),
    "one dot": Image.new("1", (1, 1), 255),
}
PLACES = [(10, 12), (-25, -7), (180, 150), (-400, 10)]


def _masked(ink: Image.Image, rotation: int, at: tuple[int, int], colour: int) -> bytes:
    canvas = _background()
    canvas.paste(colour, at, ink.transpose(TURN[rotation]) if rotation else ink)
    return canvas.tobytes()


def _background() -> Image.Image:
    """Half black, half white: a fill in either colour shows wherever it lands."""
    canvas = Image.new("1", (240, 220), WHITE)
    canvas.paste(BLACK, (0, 0, 120, 220))
    return canvas


@pytest.mark.parametrize("name", sorted(INKS))
@pytest.mark.parametrize("rotation", [0, 90, 180, 270])
def test_a_planned_ink_puts_the_dots_of_one_masked_paste(name: str, rotation: int) -> None:
    ink = INKS[name].copy()
    for colour in (BLACK, WHITE):
        for at in PLACES:
            expected = _masked(ink, rotation, at, colour)
            for _ in range(3):  # once as a masked paste, then by the plan built, then reused
                canvas = _background()
                put(canvas, ink, rotation, at, colour)
                assert canvas.tobytes() == expected, (colour, at)


def test_a_hollow_frame_is_four_fills_and_a_blank_ink_nothing() -> None:
    plan = make_plan(_frame(300, 200, line=4))
    assert sorted(step.box for step in plan) == [
        (0, 0, 300, 4),
        (0, 4, 4, 196),
        (0, 196, 300, 200),
        (296, 4, 300, 196),
    ]
    assert all(step.mask is None for step in plan)
    assert make_plan(Image.new("1", (50, 50), 0)) == ()


def test_a_text_is_pasted_only_where_it_has_dots() -> None:
    ink = Image.new("1", (400, 100), 0)
    ink.paste(_speckles(40, 30, seed=4, chance=0.4), (150, 30))  # rows unlike each other
    (step,) = make_plan(ink)
    assert step.box == ink.getbbox()
    assert step.mask is not None and step.mask.tobytes() == ink.crop(step.box).tobytes()


def test_the_plan_is_made_when_the_ink_comes_again_and_then_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[tuple[int, int]] = []
    real = ink_plan.make_plan
    monkeypatch.setattr(ink_plan, "make_plan", lambda ink: made.append(ink.size) or real(ink))
    ink, canvas = _frame(60, 20), Image.new("1", (100, 100), WHITE)
    put(canvas, ink, 0, (0, 0), BLACK)
    assert made == []  # an ink seen once (a stream's own serial) costs no plan
    put(canvas, ink, 0, (0, 0), BLACK)
    put(canvas, ink, 0, (5, 5), BLACK)
    assert made == [(60, 20)]
    put(canvas, ink, 90, (0, 0), BLACK)
    put(canvas, ink, 90, (0, 0), BLACK)
    assert made == [(60, 20), (20, 60)]  # a plan per rotation, of the turned ink


def test_an_inks_plans_go_with_it_and_a_new_ink_never_gets_them() -> None:
    canvas = Image.new("1", (100, 100), WHITE)
    first = _frame(60, 20)
    for _ in range(2):
        put(canvas, first, 0, (0, 0), BLACK)
    gone = id(first)
    assert (gone, 0) in ink_plan._PLANS
    del first
    gc.collect()
    assert (gone, 0) not in ink_plan._PLANS and gone not in ink_plan._WATCHED
    for _ in range(50):  # CPython mostly hands the freed memory to the next image made
        other = _speckles(60, 20, seed=9, chance=0.5)
        if id(other) == gone:
            break
    expected = _masked(other, 0, (3, 3), BLACK)
    for _ in range(2):
        canvas = _background()
        put(canvas, other, 0, (3, 3), BLACK)
        assert canvas.tobytes() == expected


def test_labels_render_the_same_dots_the_first_time_and_after() -> None:
    rotated = label(
        [
            text("a", "Gedreht 90", rotation=90, x_mm=30),
            text("b", "Kopf", rotation=180, x_mm=5, y_mm=20, size_pt=14),
            barcode("c", "gs1-128", GS1_128, rotation=270, x_mm=-3, y_mm=2, height_mm=8),
            {
                "id": "d",
                "type": "box",
                "x_mm": 1,
                "y_mm": 1,
                "width_mm": 48,
                "height_mm": 28,
                "line_mm": 0.4,
                "rotation": 90,
            },
            text("e", "WEISS", x_mm=2, y_mm=2, ink="white", size_pt=20),
            text("f", "UMKEHR", x_mm=10, y_mm=10, ink="reverse", size_pt=20),
        ]
    )
    for document in (logistics_label(203), logistics_label(300), rotated):
        first = render(document, {}).tobytes()
        for _ in range(3):
            assert render(document, {}).tobytes() == first
