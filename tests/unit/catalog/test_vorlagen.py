"""Vorlagen as documents: valid, complete variables, CEL that checks, objects inside the label."""

from __future__ import annotations

import json
import re
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from etikett.catalog.presets import get_preset
from etikett.catalog.vorlagen import (
    FOLDER,
    VORLAGEN,
    Vorlage,
    get_vorlage,
    raw_vorlagen,
    sample_values,
)
from etikett_engine.dsl.label import LabelDocument, LabelObject

from .gs1 import valid_check_digit

IDS = [vorlage.id for vorlage in VORLAGEN]
REQUIRED_KINDS = {
    "gs1-logistic-label": {"gs1-128"},
    "shipping-label": {"code128"},
    "product-label-ean13": {"ean13"},
    "asset-tag-qr": {"qr"},
    "udi-datamatrix": {"gs1-datamatrix"},
    "pallet-label": {"code128"},
    "shelf-label": {"ean13"},
    "warehouse-location": {"code128"},
}
SLUG = re.compile(r"^[a-z][a-z0-9_]*$")


@pytest.fixture(scope="module")
def cel() -> ModuleType:
    from etikett_engine import cel as module

    return module


def _expressions(document: LabelDocument) -> list[tuple[str, str]]:
    found = [(f"variable {v.name}", v.expression) for v in document.variables if v.expression]
    found += [
        (f"object {o.id}", o.expression)
        for o in document.objects
        if o.type in ("text", "barcode") and o.expression is not None
    ]
    return found


def test_every_catalog_file_is_a_valid_vorlage_with_a_valid_label_document():
    """The catalog is data: loading trusts the files, so this validates each one fully."""
    entries = raw_vorlagen()
    files = sorted(path.stem for path in FOLDER.glob("*.json") if path.stem != "index")
    assert sorted(entry["id"] for entry in entries) == files  # every file listed once, in order
    for entry, loaded in zip(entries, VORLAGEN, strict=True):
        validated = Vorlage.model_validate(entry)  # label schema included (`document`)
        assert validated == loaded
        assert entry["id"] + ".json" in {path.name for path in FOLDER.iterdir()}


def test_there_are_the_vorlagen_people_print_with_unique_ids():
    assert len(VORLAGEN) >= 8
    assert len(set(IDS)) == len(IDS)
    for vorlage_id, symbologies in REQUIRED_KINDS.items():
        vorlage = get_vorlage(vorlage_id)
        assert vorlage is not None, vorlage_id
        used = {o.symbology for o in vorlage.label().objects if o.type == "barcode"}
        assert symbologies <= used, vorlage_id
    assert get_vorlage("nope") is None


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_every_vorlage_is_a_valid_label_document(vorlage: Vorlage):
    document = LabelDocument.model_validate(vorlage.document)
    assert json.loads(json.dumps(vorlage.document)) == vorlage.document  # plain JSON
    assert LabelDocument.model_validate(document.model_dump(mode="json")) == document
    assert Vorlage.model_validate(vorlage.model_dump()) == vorlage
    assert get_vorlage(vorlage.id) is vorlage
    assert document.objects, "a Vorlage has a layout"


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_the_layout_matches_its_media_preset(vorlage: Vorlage):
    document = vorlage.label()
    if vorlage.preset_id is None:
        return
    preset = get_preset(vorlage.preset_id)
    assert preset is not None
    assert (document.size.width_mm, document.size.height_mm) == (preset.width_mm, preset.height_mm)
    assert document.dpi == preset.dpi


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_object_ids_and_variable_names_are_readable(vorlage: Vorlage):
    document = vorlage.label()
    for obj in document.objects:
        assert SLUG.match(obj.id), obj.id
    for variable in document.variables:
        assert SLUG.match(variable.name), variable.name


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_variables_are_described_and_sampled(vorlage: Vorlage):
    document = vorlage.label()
    assert document.variables
    for variable in document.variables:
        assert variable.description, variable.name
        if variable.expression is not None:
            # Computed: nothing to enter, so nothing to sample, default or require.
            assert variable.sample is variable.default is None, variable.name
            assert not variable.required, variable.name
        elif variable.required:
            assert variable.sample is not None, f"{variable.name}: required, needs a sample"
            assert variable.default is None, f"{variable.name}: required and defaulted"
        else:
            assert variable.default is not None, f"{variable.name}: optional, needs a default"
    samples = sample_values(vorlage)
    entered = {v.name for v in document.variables if v.expression is None}
    assert set(samples) <= entered
    assert {v.name for v in document.variables if v.required} <= set(samples)


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_samples_and_defaults_coerce_to_the_declared_types(vorlage: Vorlage, cel: ModuleType):
    for variable in vorlage.label().variables:
        for what in ("sample", "default"):
            value = getattr(variable, what)
            if value is not None:
                try:
                    cel.coerce(value, variable.type)
                except ValueError as exc:
                    pytest.fail(f"{variable.name} {what} {value!r}: {exc}")


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_every_expression_checks_against_the_declared_variables(vorlage: Vorlage, cel: ModuleType):
    document = vorlage.label()
    declared = {variable.name: variable.type for variable in document.variables}
    expressions = _expressions(document)
    assert expressions
    for where, source in expressions:
        try:
            cel.check(source, declared)
        except cel.CelInvalid as exc:
            pytest.fail(f"{vorlage.id} {where}: {exc}")


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_sample_gtins_carry_valid_check_digits(vorlage: Vorlage):
    for variable in vorlage.label().variables:
        sample = variable.sample
        if "gtin" in variable.name and isinstance(sample, str) and len(sample) in (13, 14):
            assert valid_check_digit(sample), f"{variable.name} = {sample}"


def _box(obj: LabelObject) -> tuple[float, float, float, float] | None:
    """The object's extent in mm as (left, top, right, bottom), when the model gives one."""
    if obj.type in ("box", "ellipse", "image"):
        w, h = obj.width_mm, obj.height_mm
    elif obj.type == "line":
        w, h = obj.length_mm, obj.thickness_mm
    elif obj.type == "text" and obj.width_mm is not None:
        w, h = obj.width_mm, obj.height_mm or 0.0
    else:
        return None
    if obj.rotation in (90, 270):
        w, h = h, w
    return obj.x_mm, obj.y_mm, obj.x_mm + w, obj.y_mm + h


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_every_object_lies_within_the_label(vorlage: Vorlage):
    document = vorlage.label()
    width, height = document.size.width_mm, document.size.height_mm
    for obj in document.objects:
        assert 0 <= obj.x_mm < width and 0 <= obj.y_mm < height, f"{obj.id}: anchor outside"
        box = _box(obj)
        if box is not None:
            left, top, right, bottom = box
            assert left >= 0 and top >= 0, f"{obj.id}: {box}"
            assert right <= width + 1e-9 and bottom <= height + 1e-9, f"{obj.id}: {box}"


@pytest.mark.parametrize("vorlage", VORLAGEN, ids=IDS)
def test_barcodes_use_whole_dot_modules_of_sensible_size(vorlage: Vorlage):
    document = vorlage.label()
    dot_mm = 25.4 / document.dpi
    for obj in document.objects:
        if obj.type != "barcode":
            continue
        assert obj.module_width_dots is not None, obj.id
        module_mm = obj.module_width_dots * dot_mm
        if obj.symbology in ("qr", "datamatrix", "gs1-datamatrix", "pdf417"):
            assert 0.33 <= module_mm <= 1.0, obj.id
        else:
            assert 0.25 <= module_mm <= 1.0, obj.id
            assert obj.height_mm is not None and obj.height_mm >= 8, obj.id
        if obj.symbology in ("gs1-128", "itf14") and obj.id in ("sscc_barcode", "case_barcode"):
            assert module_mm >= 0.495, f"{obj.id}: GS1 logistics minimum X is 0.495 mm"


def test_the_model_refuses_a_broken_vorlage():
    vorlage = VORLAGEN[0]
    data: dict[str, Any] = vorlage.model_dump()
    with pytest.raises(ValidationError):
        Vorlage.model_validate({**data, "document": {**data["document"], "dpi": 150}})
    with pytest.raises(ValidationError):
        Vorlage.model_validate({**data, "preset_id": "no-such-preset"})
    with pytest.raises(ValidationError):
        Vorlage.model_validate({**data, "category": "misc"})
    with pytest.raises(ValidationError):
        Vorlage.model_validate({**data, "extra": 1})


def test_sample_values_are_the_entered_samples():
    vorlage = get_vorlage("gs1-logistic-label")
    assert vorlage is not None
    samples = sample_values(vorlage)
    assert samples["company_prefix"] == "4012345"
    assert "sscc" not in samples and "best_before" not in samples  # computed
    assert "to_country" not in samples  # default only
