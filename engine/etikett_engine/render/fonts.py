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


def font(family: str, weight: int, size_px: float) -> FreeTypeFont:
    """The family at `size_px` pixels (em size), its weight clamped to what the family offers."""
    return _font(family, _clamp_weight(family, weight), round(size_px * 64) / 64)


@lru_cache(maxsize=512)
def _font(family: str, weight: int, size_px: float) -> FreeTypeFont:

    face: FreeTypeFont = fontpkg.pil.truetype(family, size_px, weight=weight)
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
