"""Media presets: real label stock (brand, part number, size, density, die-cut or continuous).

The catalog is data, `presets.json` beside this module, read once per process on first use (a test
validates every entry against `MediaPreset`). Sizes are the label's own size, width across the
print head and height in the feed direction. Inch stock is converted exactly (inches × 25.4). Part
numbers are the manufacturers' where the stock is one product; roll sizes sold by every label maker
under many numbers are `Generic` with no part number. Continuous media gets a default length
(stated in its description).
"""

import json
from functools import cache
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from etikett_engine.dsl.label import DPI, LabelDocument, blank
from etikett_engine.model import Model

MM_PER_INCH = 25.4
PRESET_ID = r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$"
DATA = Path(__file__).with_name("presets.json")
Media = Literal["die-cut", "continuous"]


class MediaPreset(Model):
    """One label stock at one print density."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=PRESET_ID, max_length=64, description="Stable slug.")
    name: str = Field(
        min_length=1,
        max_length=100,
        description="What people call it: brand, part number, size and density.",
        examples=["Zebra 800264-605, 4 × 6 in, 203 dpi"],
    )
    brand: str = Field(min_length=1, max_length=40)
    part_number: str | None = Field(
        default=None, max_length=40, description="Manufacturer's part number; None for generic."
    )
    description: str = Field(min_length=1, max_length=200)
    width_mm: float = Field(gt=0, le=1000, description="Across the print head.")
    height_mm: float = Field(
        gt=0, le=1000, description="Feed direction (default length if continuous)."
    )
    dpi: DPI
    media: Media
    gap_mm: float | None = Field(
        default=None, ge=0, le=50, description="Gap between die-cut labels on the liner."
    )

    @model_validator(mode="after")
    def _gap_only_die_cut(self) -> Self:
        if self.media == "continuous" and self.gap_mm is not None:
            raise ValueError("continuous media has no gap")
        return self

    def blank(self) -> LabelDocument:
        """An empty label document of this size and density."""
        return blank(self.width_mm, self.height_mm, self.dpi)


def inches(value: float) -> float:
    """Inches → mm, exactly (rounded to 1 µm only to drop binary-float noise)."""
    return round(value * MM_PER_INCH, 3)


def raw_presets() -> list[dict[str, Any]]:
    """The catalog file's entries as written (the test validates them)."""
    with DATA.open(encoding="utf-8") as file:
        return list(json.load(file)["presets"])


@cache
def presets() -> tuple[MediaPreset, ...]:
    """Every preset in catalog order; read once per process. Entries are trusted (a test
    validates the file), so they are built without validation."""
    return tuple(MediaPreset.model_construct(**entry) for entry in raw_presets())


@cache
def _by_id() -> dict[str, MediaPreset]:
    return {preset.id: preset for preset in presets()}


def get_preset(id: str) -> MediaPreset | None:
    return _by_id().get(id)


def __getattr__(name: str) -> Any:
    if name == "PRESETS":  # the catalog as a tuple, read on first use
        return presets()
    raise AttributeError(name)
