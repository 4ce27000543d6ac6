"""One label's printer job in the printer's language: the one place that chooses the encoder, so
that the service and a Runner that renders on site send the same bytes for the same raster."""

from __future__ import annotations

from typing import Literal

from PIL import Image

from etikett_engine.render.epl import encode_epl
from etikett_engine.render.tspl import encode_tspl
from etikett_engine.render.zpl import encode_zpl

Language = Literal["zpl", "tspl", "epl"]
LANGUAGES: tuple[Language, ...] = ("zpl", "tspl", "epl")


def encode_job(image: Image.Image, language: str, *, copies: int, dpi: int) -> bytes:
    """`image` as a complete job of `copies` labels; ZPL for any language not named (the
    printer's language is checked where a printer is registered)."""
    if language == "tspl":
        return encode_tspl(image, copies=copies, dpi=dpi)
    if language == "epl":
        return encode_epl(image, copies=copies, dpi=dpi)
    return encode_zpl(image, copies=copies)
