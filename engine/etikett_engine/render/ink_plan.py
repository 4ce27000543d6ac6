"""How an object's ink reaches the label when the same ink is painted again: filled rectangles and
masked pastes of its inked bands only, the same dots as one masked paste of the whole ink.

A masked paste costs about the same for every dot of the ink's box, blank or not (≈ 0.7 ns on
these machines): the frame of a 4 × 6 in label pastes 436,000 dots for its 5,600 black ones, a
third of the label's composition. An ink painted a second time (a cached ink: every preview of a
label after its first, a stream's fixed texts and frames) gets a plan, kept while the ink lives:
its rows grouped into bands of equal rows; a band whose runs of dots are few becomes that many
filled rectangles, a blank band nothing, and the rest masked pastes of their inked columns (next
bands joined when one paste costs less than two). Each step sets dots to the ink's colour where
the ink has a dot, so the label gets exactly the dots one masked paste gives. Inks are never drawn
on once made (etikett_engine.render.cache), so a plan stays true for its ink. A plan's pastes are
crops of its ink: plans hold at most as many dots again as the inks alive (the cache's 32 M).
"""

from __future__ import annotations

import re
import weakref
from collections.abc import Callable
from dataclasses import dataclass

from PIL import Image

# Clockwise on the label (y down) is counter-clockwise in PIL's naming.
TURN = {
    90: Image.Transpose.ROTATE_270,
    180: Image.Transpose.ROTATE_180,
    270: Image.Transpose.ROTATE_90,
}

# What a step costs, in microseconds, as measured on these machines: a call of `Image.paste`, a row
# it touches, a dot of a masked paste.
CALL_US = 1.5
ROW_US = 0.007
DOT_US = 0.0007

_RUN = re.compile(rb"[^\x00]+")  # a run of dots in a row of the ink read a byte a dot


@dataclass(frozen=True)
class Step:
    box: tuple[int, int, int, int]  # in the (turned) ink's dots
    mask: Image.Image | None  # None: fill the whole box


Plan = tuple[Step, ...]

# (id of the ink, rotation) → its plan, or None when the ink was painted once. An ink's entries go
# when the ink does (`_forget`), so the plans of a stream's one-off texts never pile up.
_PLANS: dict[tuple[int, int], Plan | None] = {}
_WATCHED: dict[int, weakref.ref[Image.Image]] = {}


def put(
    canvas: Image.Image, ink: Image.Image, rotation: int, at: tuple[int, int], colour: int
) -> None:
    """Set the canvas's dots to `colour` where the ink, turned by `rotation`, has a dot, with the
    ink's top-left corner at `at`."""
    plan = _plan_for(ink, rotation)
    if plan is None:
        canvas.paste(colour, at, ink.transpose(TURN[rotation]) if rotation else ink)
        return
    left, top = at
    for step in plan:
        x0, y0, x1, y1 = step.box
        if step.mask is None:
            canvas.paste(colour, (left + x0, top + y0, left + x1, top + y1))
        else:
            canvas.paste(colour, (left + x0, top + y0), step.mask)


def _plan_for(ink: Image.Image, rotation: int) -> Plan | None:
    """The ink's plan once it is painted again; None the first time."""
    key = (id(ink), rotation)
    watched = _WATCHED.get(key[0])
    if watched is None or watched() is not ink:
        _forget(key[0])
        _WATCHED[key[0]] = weakref.ref(ink, _forgetter(key[0]))
        _PLANS[key] = None
        return None
    if key not in _PLANS:
        _PLANS[key] = None
        return None
    plan = _PLANS[key]
    if plan is None:
        plan = _PLANS[key] = make_plan(ink.transpose(TURN[rotation]) if rotation else ink)
    return plan


def _forgetter(ink_id: int) -> Callable[[weakref.ref[Image.Image]], None]:
    return lambda ref: _forget(ink_id, ref)


def _forget(ink_id: int, ref: weakref.ref[Image.Image] | None = None) -> None:
    if ref is not None and _WATCHED.get(ink_id) is not ref:
        return  # a newer ink with the same id is watched already
    _WATCHED.pop(ink_id, None)
    for rotation in (0, 90, 180, 270):
        _PLANS.pop((ink_id, rotation), None)


def make_plan(ink: Image.Image) -> Plan:
    """The steps that put exactly the ink's dots (mode "1", 255 = dot), cheapest by the costs
    above."""
    width, height = ink.size
    dots = ink.tobytes("raw", "L")  # a byte a dot
    steps: list[Step] = []
    pending: tuple[int, int, int, int] | None = None  # a masked region being widened downwards
    top = 0
    while top < height:
        row = dots[top * width : (top + 1) * width]
        bottom = top + 1
        while bottom < height and dots[bottom * width : (bottom + 1) * width] == row:
            bottom += 1
        runs = [match.span() for match in _RUN.finditer(row)]
        rows = bottom - top
        if runs:
            left, right = runs[0][0], runs[-1][1]
            as_fills = len(runs) * (CALL_US + rows * ROW_US)
            as_paste = CALL_US + rows * ROW_US + (right - left) * rows * DOT_US
            if as_fills < as_paste:
                if pending is not None:
                    steps.append(_paste(ink, pending))
                    pending = None
                steps += [Step((start, top, end, bottom), None) for start, end in runs]
            elif pending is None:
                pending = (left, top, right, bottom)
            else:
                joined = (min(pending[0], left), pending[1], max(pending[2], right), bottom)
                if _paste_cost(joined) <= _paste_cost(pending) + as_paste:
                    pending = joined
                else:
                    steps.append(_paste(ink, pending))
                    pending = (left, top, right, bottom)
        top = bottom
    if pending is not None:
        steps.append(_paste(ink, pending))
    return tuple(steps)


def _paste_cost(box: tuple[int, int, int, int]) -> float:
    rows = box[3] - box[1]
    return CALL_US + rows * ROW_US + (box[2] - box[0]) * rows * DOT_US


def _paste(ink: Image.Image, box: tuple[int, int, int, int]) -> Step:
    return Step(box, ink.crop(box))
