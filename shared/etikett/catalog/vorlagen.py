"""Vorlagen: complete label documents people print every day, ready to copy and adapt.

The catalog is data: one JSON file per Vorlage in `vorlagen/` beside this module, in the order
`vorlagen/index.json` gives, read once per process on first use. A test validates every file
against `Vorlage` and its document against the label schema, so loading trusts them.

Each Vorlage is a valid `LabelDocument` with declared, described variables, samples for previews,
computed variables in CEL where the domain has a rule (GS1 check digits, element strings,
best-before dates, unit prices), and a layout in mm that fits its media preset. GS1 data is written
in `(AI)value` notation; the samples carry valid check digits. Positions are top-left anchors;
barcodes keep their quiet zones clear (10 modules beside linear codes) and every Vorlage passes
preflight with no error at 203, 300 and 600 dpi.
"""

import json
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator

from etikett.dsl.label import LabelDocument
from etikett.model import Model

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
        from etikett.catalog.presets import get_preset

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
