"""Vorlagen: complete label documents people print every day, ready to copy and adapt.

The catalog is data: one JSON file per Vorlage in `vorlagen/` beside this module, in the order
`vorlagen/index.json` gives, read once per process on first use. A test validates every file
against `Vorlage` and its document against the label schema, so loading trusts them.

Each Vorlage is a valid `LabelDocument` with declared, described variables, samples for previews,
computed variables in CEL where the domain has a rule (GS1 check digits, element strings,
best-before dates, unit prices), and a layout in mm that fits its media preset. GS1 data is written
in `(AI)value` notation; the samples carry valid check digits. Positions are top-left anchors;
barcodes keep their quiet zones clear (10 modules beside linear codes) and every Vorlage passes
preflight with no error at 203, 300 and 600 dpi. `on_stock` lays a Vorlage out on other stock
(a media preset or any size), as it is or scaled to fit.
"""

import copy
import json
import math
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from etikett.catalog.presets import get_preset
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.model import Model

Category = Literal["logistics", "shipping", "retail", "assets", "healthcare", "warehouse"]
VORLAGE_ID = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"
FOLDER = Path(__file__).with_name("vorlagen")


class Vorlage(Model):
    """A named, categorised label document to start from.

    `document` is shared by everyone who reads the catalog: copy it (`label()` gives a fresh
    model, `copy.deepcopy` a fresh dict) before changing anything.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=VORLAGE_ID, max_length=64, description="Stable slug.")
    name: str = Field(min_length=1, max_length=100)
    description: str = Field(min_length=1, max_length=500)
    category: Category
    preset_id: str | None = Field(
        default=None, description="The media preset it is laid out for, when one fits."
    )
    document: dict[str, Any] = Field(description="A complete `LabelDocument` as JSON.")

    @field_validator("document")
    @classmethod
    def _valid_document(cls, document: dict[str, Any]) -> dict[str, Any]:
        LabelDocument.model_validate(document)
        return document

    @field_validator("preset_id")
    @classmethod
    def _known_preset(cls, preset_id: str | None) -> str | None:

        if preset_id is not None and get_preset(preset_id) is None:
            raise ValueError(f"unknown media preset {preset_id!r}")
        return preset_id

    def label(self) -> LabelDocument:
        return LabelDocument.model_validate(self.document)


def raw_vorlagen() -> list[dict[str, Any]]:
    """The catalog files' contents as written, in catalog order (the test validates them)."""
    with (FOLDER / "index.json").open(encoding="utf-8") as file:
        order = json.load(file)["order"]
    entries = []
    for vorlage_id in order:
        with (FOLDER / f"{vorlage_id}.json").open(encoding="utf-8") as file:
            entries.append(json.load(file))
    return entries


@cache
def vorlagen() -> tuple[Vorlage, ...]:
    """Every Vorlage in catalog order; read once per process, without re-validation."""
    return tuple(Vorlage.model_construct(**entry) for entry in raw_vorlagen())


@cache
def _by_id() -> dict[str, Vorlage]:
    return {vorlage.id: vorlage for vorlage in vorlagen()}


def get_vorlage(id: str) -> Vorlage | None:
    return _by_id().get(id)


def sample_values(vorlage: Vorlage) -> dict[str, Any]:
    """The sample of every entered (not computed) variable that has one: print data for previews."""
    return {
        variable["name"]: variable["sample"]
        for variable in vorlage.document.get("variables", [])
        if variable.get("expression") is None and variable.get("sample") is not None
    }


def __getattr__(name: str) -> Any:
    if name == "VORLAGEN":  # the catalog as a tuple, read on first use
        return vorlagen()
    raise AttributeError(name)


# --- a Vorlage on other stock ------------------------------------------------------------------

Fit = Literal["keep", "scale"]
MM_PER_INCH = 25.4
# Every length of an object in mm (positions apart): what `scale` multiplies.
_LENGTHS_MM = ("width_mm", "height_mm", "length_mm", "thickness_mm", "line_mm", "corner_radius_mm")
_SIZES_PT = ("size_pt", "text_size_pt")


def on_stock(
    document: dict[str, Any], width_mm: float, height_mm: float, dpi: int, fit: Fit = "keep"
) -> dict[str, Any]:
    """The label document laid out on stock of this size and density (a new dict).

    `keep`: every object stays where it is, in mm, as a designer changing the stock would see it;
    what no longer fits is for preflight to report. `scale`: the whole layout is scaled by one
    factor to fit the stock (the smaller of width and height ratios) and centred on it; text
    sizes, lines, boxes and barcode modules scale with it. Either way a size given in dots
    (a barcode's module, its bar height) keeps its length in mm at the new density, in whole
    dots, at least one: preflight says when a module becomes too narrow to print. Scaled modules
    are rounded down to whole dots, so a barcode never grows past its scaled place (and its quiet
    zones past theirs)."""
    size = document["size"]
    factor = 1.0
    offset_x = offset_y = 0.0
    if fit == "scale":
        factor = min(width_mm / size["width_mm"], height_mm / size["height_mm"])
        offset_x = (width_mm - size["width_mm"] * factor) / 2
        offset_y = (height_mm - size["height_mm"] * factor) / 2
    density = dpi / document.get("dpi", 203)
    placed = copy.deepcopy(document)
    placed["size"] = {"width_mm": width_mm, "height_mm": height_mm}
    placed["dpi"] = dpi
    for obj in placed.get("objects", []):
        obj["x_mm"] = _mm(obj["x_mm"] * factor + offset_x)
        obj["y_mm"] = _mm(obj["y_mm"] * factor + offset_y)
        for key in _LENGTHS_MM:
            if obj.get(key) is not None:
                obj[key] = max(0.01, _mm(obj[key] * factor))
        for key in _SIZES_PT:
            if obj.get(key) is not None:
                obj[key] = max(0.5, round(obj[key] * factor, 2))
        if obj.get("height_dots") is not None:
            obj["height_dots"] = max(1, round(obj["height_dots"] * density * factor))
        _module(obj, density, factor, dpi)
    return placed


def _module(obj: dict[str, Any], density: float, factor: float, dpi: int) -> None:
    if obj.get("module_width_dots") is not None:
        exact = obj["module_width_dots"] * density * factor
        obj["module_width_dots"] = max(1, math.floor(exact + 1e-6) if factor != 1 else round(exact))
    elif obj.get("module_width_mm") is not None and factor != 1:
        dots = max(1, math.floor(obj["module_width_mm"] * factor / MM_PER_INCH * dpi + 1e-6))
        obj["module_width_mm"] = round(dots * MM_PER_INCH / dpi, 4)


def _mm(value: float) -> float:
    return round(value, 3)
