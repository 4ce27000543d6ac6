"""Label documents the render tests share."""

from __future__ import annotations

import base64
import io
from typing import Any

from PIL import Image

from etikett_engine.dsl.label import LabelDocument

GS1_128 = "(00)340123450000000000"
GS1_DM = "(01)09501101530003(17)270101(10)AB12"


def label(
    objects: list[dict[str, Any]],
    *,
    width_mm: float = 50,
    height_mm: float = 30,
    dpi: int = 203,
    variables: list[dict[str, Any]] | None = None,
) -> LabelDocument:
    return LabelDocument.model_validate(
        {
            "size": {"width_mm": width_mm, "height_mm": height_mm},
            "dpi": dpi,
            "variables": variables or [],
            "objects": objects,
        }
    )


def text(id_: str, content: str, **fields: Any) -> dict[str, Any]:
    return {"id": id_, "type": "text", "x_mm": 2, "y_mm": 2, "content": content, **fields}


def barcode(id_: str, symbology: str, content: str, **fields: Any) -> dict[str, Any]:
    return {
        "id": id_,
        "type": "barcode",
        "symbology": symbology,
        "x_mm": 5,
        "y_mm": 5,
        "content": content,
        **fields,
    }


def png_base64(image: Image.Image, fmt: str = "PNG") -> str:
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def gradient(width: int = 64, height: int = 16) -> Image.Image:
    """Black at the left to white at the right."""
    row = bytes(round(255 * x / (width - 1)) for x in range(width))
    return Image.frombytes("L", (width, height), row * height)


def logistics_label(dpi: int = 203) -> LabelDocument:
    """A GS1 logistics label, 4 x 6 in: sender, address block, SSCC, GS1 DataMatrix, frames."""
    return label(
        [
            text("from-title", "FROM", x_mm=4, y_mm=4, size_pt=7, weight=700),
            text(
                "from",
                "Etikett Versand GmbH\nGroßstraße 12 · 10115 Berlin",
                x_mm=4,
                y_mm=7,
                size_pt=9,
                width_mm=60,
                wrap=True,
            ),
            text("to-title", "TO", x_mm=4, y_mm=18, size_pt=7, weight=700),
            text(
                "to",
                "Müller & Söhne KG\nWarenannahme Tor 3\nHafenstraße 77\n20457 Hamburg",
                x_mm=4,
                y_mm=21,
                size_pt=13,
                weight=600,
                width_mm=92,
                height_mm=26,
                shrink_to_fit=True,
            ),
            {
                "id": "rule1",
                "type": "line",
                "x_mm": 0,
                "y_mm": 50,
                "length_mm": 101.6,
                "thickness_mm": 0.6,
            },
            text("carrier", "PAKET · 12,40 €", x_mm=4, y_mm=53, size_pt=16, weight=700),
            barcode("dm", "gs1-datamatrix", GS1_DM, x_mm=72, y_mm=53),
            {
                "id": "frame",
                "type": "box",
                "x_mm": 2,
                "y_mm": 78,
                "width_mm": 97.6,
                "height_mm": 70,
                "line_mm": 0.5,
            },
            text("sscc-title", "SSCC", x_mm=6, y_mm=81, size_pt=8, weight=700),
            barcode("sscc", "gs1-128", GS1_128, x_mm=11, y_mm=88, height_mm=32),
        ],
        width_mm=101.6,
        height_mm=152.4,
        dpi=dpi,
    )
