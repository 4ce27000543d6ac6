"""Media presets: valid, unique, exact sizes, real stock."""

from __future__ import annotations

import re

import pytest
from pydantic import ValidationError

from etikett.catalog.presets import PRESETS, MediaPreset, get_preset, raw_presets
from etikett_engine.dsl.label import LabelDocument

IDS = [preset.id for preset in PRESETS]
INCH_ID = re.compile(r"^(?:zebra|roll)-(?P<w>[0-9.]+)x(?P<h>[0-9.]+)-(?P<dpi>203|300|600)$")


def test_the_catalog_file_validates_and_every_preset_has_a_name():
    """The catalog is data: loading trusts the file, so this validates each entry fully."""
    entries = raw_presets()
    for entry, loaded in zip(entries, PRESETS, strict=True):
        validated = MediaPreset.model_validate(entry)
        assert validated == loaded
        assert validated.name.strip() == validated.name and validated.name
        assert f"{validated.dpi} dpi" in validated.name
        if validated.part_number:
            assert validated.part_number in validated.name
    names = [preset.name for preset in PRESETS]
    assert len(set(names)) == len(names)


def test_there_are_at_least_twenty_presets_with_unique_ids():
    assert len(PRESETS) >= 20
    assert len(set(IDS)) == len(IDS)


@pytest.mark.parametrize("preset", PRESETS, ids=IDS)
def test_every_preset_is_valid_and_found_by_its_id(preset: MediaPreset):
    assert MediaPreset.model_validate(preset.model_dump()) == preset
    assert get_preset(preset.id) is preset
    assert preset.dpi in (203, 300, 600)
    assert preset.description.strip() == preset.description


def test_an_unknown_id_finds_nothing():
    assert get_preset("zebra-4x6") is None
    assert get_preset("") is None


@pytest.mark.parametrize("preset", PRESETS, ids=IDS)
def test_sizes_are_plausible_for_desktop_label_printers(preset: MediaPreset):
    assert 10 <= preset.width_mm <= 108  # 4-inch printers print up to 104-108 mm wide
    assert 15 <= preset.height_mm <= 300
    if preset.media == "die-cut" and preset.gap_mm is not None:
        assert 1.5 <= preset.gap_mm <= 5
    if preset.media == "continuous":
        assert preset.gap_mm is None
        assert "default length" in preset.description


@pytest.mark.parametrize(
    "preset",
    [p for p in PRESETS if INCH_ID.match(p.id)],
    ids=[p.id for p in PRESETS if INCH_ID.match(p.id)],
)
def test_inch_stock_is_converted_exactly(preset: MediaPreset):
    match = INCH_ID.match(preset.id)
    assert match is not None
    assert preset.width_mm == pytest.approx(float(match["w"]) * 25.4, abs=1e-9)
    assert preset.height_mm == pytest.approx(float(match["h"]) * 25.4, abs=1e-9)
    assert preset.dpi == int(match["dpi"])


def test_the_presets_cover_the_common_stock():
    expected = {
        "zebra-4x6-203": ("Zebra", "800264-605", 101.6, 152.4, 203),
        "zebra-4x6-300": ("Zebra", "800264-605", 101.6, 152.4, 300),
        "zebra-2.25x1.25-203": ("Zebra", "800262-125", 57.15, 31.75, 203),
        "roll-4x2-203": ("Generic", None, 101.6, 50.8, 203),
        "a6-203": ("Generic", None, 105, 148, 203),
        "100x150-203": ("Generic", None, 100, 150, 203),
        "brother-dk-11201": ("Brother", "DK-11201", 29, 90, 300),
        "brother-dk-11202": ("Brother", "DK-11202", 62, 100, 300),
        "brother-dk-11208": ("Brother", "DK-11208", 38, 90, 300),
        "brother-dk-11209": ("Brother", "DK-11209", 29, 62, 300),
        "brother-dk-22205": ("Brother", "DK-22205", 62, 100, 300),
        "dymo-99010": ("Dymo", "99010", 28, 89, 300),
        "dymo-99012": ("Dymo", "99012", 36, 89, 300),
        "dymo-11354": ("Dymo", "11354", 57, 32, 300),
        "dymo-30256": ("Dymo", "30256", 59, 102, 300),
        "dymo-99014": ("Dymo", "99014", 54, 101, 300),
    }
    for preset_id, (brand, part, width, height, dpi) in expected.items():
        preset = get_preset(preset_id)
        assert preset is not None, preset_id
        assert (preset.brand, preset.part_number, preset.dpi) == (brand, part, dpi), preset_id
        assert (preset.width_mm, preset.height_mm) == pytest.approx((width, height)), preset_id
    assert get_preset("brother-dk-22205").media == "continuous"  # type: ignore[union-attr]
    brands = {preset.brand for preset in PRESETS}
    assert {"Zebra", "Brother", "Dymo", "Generic"} <= brands


def test_one_part_at_one_density_is_one_preset():
    parts = [(p.brand, p.part_number, p.dpi) for p in PRESETS if p.part_number is not None]
    assert len(set(parts)) == len(parts)
    sizes = [(p.width_mm, p.height_mm, p.dpi, p.media) for p in PRESETS if p.part_number is None]
    assert len(set(sizes)) == len(sizes)


@pytest.mark.parametrize("preset", PRESETS, ids=IDS)
def test_a_preset_gives_a_blank_label_document_of_its_size(preset: MediaPreset):
    document = preset.blank()
    assert LabelDocument.model_validate(document.model_dump()) == document
    assert (document.size.width_mm, document.size.height_mm) == (preset.width_mm, preset.height_mm)
    assert document.dpi == preset.dpi
    assert document.objects == [] and document.variables == []


def test_the_model_refuses_unknown_fields_and_bad_values():
    base = get_preset("zebra-4x6-203")
    assert base is not None
    data = base.model_dump()
    with pytest.raises(ValidationError):
        MediaPreset.model_validate({**data, "colour": "white"})
    with pytest.raises(ValidationError):
        MediaPreset.model_validate({**data, "media": "continuous"})  # a gap on continuous media
    with pytest.raises(ValidationError):
        MediaPreset.model_validate({**data, "dpi": 200})
    with pytest.raises(ValidationError):
        MediaPreset.model_validate({**data, "id": "Zebra 4x6"})
    with pytest.raises(ValidationError):
        MediaPreset.model_validate({**data, "width_mm": 0})
