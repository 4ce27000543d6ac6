"""TrueType fonts from the fontpkg packages (never system fonts), cached per family/weight/size."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

import fontpkg
import fontpkg.pil

if TYPE_CHECKING:
    from PIL.ImageFont import FreeTypeFont

# Each family's wheel on PyPI; `layers/render/requirements.txt` lists the same set.
PACKAGES = {
    "Roboto": "fontpkg-roboto",
    "Roboto Condensed": "fontpkg-roboto-condensed",
    "Roboto Mono": "fontpkg-roboto-mono",
    "Noto Sans": "fontpkg-noto-sans",
}


def font(family: str, weight: int, size_px: float, *, one_bit: bool = False) -> FreeTypeFont:
    """The family at `size_px` pixels (em size), its weight clamped to what the family offers.

    `one_bit`: the face to draw 1-bit glyphs with (`fontmode = "1"`), another object of the same
    font than the one that measures. FreeType hints a 1-bit glyph in another mode than a measured
    (or anti-aliased) one, and a face that switches between the two runs the font's whole `prep`
    program again at each switch: on one face, that was 40 % of a text's cost, twice a text (its
    layout measures, then it is drawn). Each face keeps to its mode, and its glyphs are hinted
    exactly as on one face switching modes (tests/unit/render/test_text.py)."""
    return _font(family, _clamp_weight(family, weight), round(size_px * 64) / 64, one_bit)


@lru_cache(maxsize=512)
def _font(family: str, weight: int, size_px: float, one_bit: bool) -> FreeTypeFont:

    face: FreeTypeFont = fontpkg.pil.truetype(family, size_px, weight=weight)
    if one_bit:
        # One glyph measured first, so that the first 1-bit glyph switches the face's mode and
        # FreeType runs `prep` again for it, as every 1-bit text did when one face measured and
        # drew: a face's first `prep` (run when its size is set) leaves another CVT on a variable
        # font away from its default instance (Roboto at 900: "#" one dot to the right).
        face.getbbox("x")
    return face


@lru_cache(maxsize=16)
def _clamp_weight(family: str, weight: int) -> int:

    files = [f for f in fontpkg.family(family).files if f.style == "normal"]
    ranges = [
        (f.wght_min, f.wght_max)
        for f in files
        if f.variable and f.wght_min is not None and f.wght_max is not None
    ]
    if ranges:
        low, high = min(r[0] for r in ranges), max(r[1] for r in ranges)
        return int(min(max(weight, low), high))
    weights = [f.weight for f in files if f.weight is not None]
    return int(min(weights, key=lambda w: (abs(w - weight), w))) if weights else weight
