"""Media presets: real label stock (brand, part number, size, density, die-cut or continuous).

Sizes are the label's own size, width across the print head and height in the feed direction.
Inch stock is converted exactly (inches × 25.4). Part numbers are the manufacturers' where the
stock is one product; roll sizes sold by every label maker under many numbers are `Generic` with
no part number. Continuous media gets a default length (stated in its description).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from etikett.dsl.label import DPI, LabelDocument, blank

MM_PER_INCH = 25.4
PRESET_ID = r"^[a-z0-9]+(?:[-.][a-z0-9]+)*$"
Media = Literal["die-cut", "continuous"]


class MediaPreset(BaseModel):
    """One label stock at one print density."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=PRESET_ID, max_length=64, description="Stable slug.")
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
    def _gap_only_die_cut(self) -> MediaPreset:
        if self.media == "continuous" and self.gap_mm is not None:
            raise ValueError("continuous media has no gap")
        return self

    def blank(self) -> LabelDocument:
        """An empty label document of this size and density."""
        return blank(self.width_mm, self.height_mm, self.dpi)


def inches(value: float) -> float:
    """Inches → mm, exactly (rounded to 1 µm only to drop binary-float noise)."""
    return round(value * MM_PER_INCH, 3)


ZEBRA_GAP_MM = inches(0.125)  # Zebra desktop die-cut rolls: 0.125 in between labels


def _inch_roll(
    brand: str, part: str | None, w: float, h: float, dpi: int, description: str
) -> MediaPreset:
    slug = "zebra" if brand == "Zebra" else "roll"
    return MediaPreset(
        id=f"{slug}-{w:g}x{h:g}-{dpi}",
        brand=brand,
        part_number=part,
        description=description,
        width_mm=inches(w),
        height_mm=inches(h),
        dpi=dpi,
        media="die-cut",
        gap_mm=ZEBRA_GAP_MM,
    )


def _mm(
    id: str,
    brand: str,
    part: str | None,
    w: float,
    h: float,
    dpi: int,
    description: str,
    media: Media = "die-cut",
) -> MediaPreset:
    return MediaPreset(
        id=id,
        brand=brand,
        part_number=part,
        description=description,
        width_mm=w,
        height_mm=h,
        dpi=dpi,
        media=media,
    )


_ZSELECT = "Zebra Z-Select 2000D direct thermal"

PRESETS: tuple[MediaPreset, ...] = (
    # Zebra desktop direct-thermal rolls (Z-Select 2000D) at 203 dpi (GK/ZD 203 dpi models).
    _inch_roll("Zebra", "800264-605", 4, 6, 203, f"{_ZSELECT}, 4 × 6 in shipping label"),
    _inch_roll("Zebra", "800264-605", 4, 6, 300, f"{_ZSELECT}, 4 × 6 in, on a 300 dpi printer"),
    _inch_roll("Zebra", "800264-405", 4, 4, 203, f"{_ZSELECT}, 4 × 4 in"),
    _inch_roll("Zebra", "800264-155", 4, 1.5, 203, f"{_ZSELECT}, 4 × 1.5 in address label"),
    _inch_roll("Zebra", "800263-205", 3, 2, 203, f"{_ZSELECT}, 3 × 2 in product label"),
    _inch_roll("Zebra", "800262-125", 2.25, 1.25, 203, f"{_ZSELECT}, 2.25 × 1.25 in"),
    _inch_roll(
        "Zebra", "800262-125", 2.25, 1.25, 300, f"{_ZSELECT}, 2.25 × 1.25 in, on a 300 dpi printer"
    ),
    _inch_roll("Zebra", "800262-075", 2.25, 0.75, 203, f"{_ZSELECT}, 2.25 × 0.75 in"),
    _inch_roll("Zebra", "800261-105", 1.25, 1, 203, f"{_ZSELECT}, 1.25 × 1 in"),
    # Standard thermal roll sizes every label maker sells (direct thermal or thermal transfer).
    _inch_roll("Generic", None, 4, 8, 203, "4 × 8 in thermal roll (long shipping label)"),
    _inch_roll("Generic", None, 4, 3, 203, "4 × 3 in thermal roll"),
    _inch_roll("Generic", None, 4, 2, 203, "4 × 2 in thermal roll (carton, location labels)"),
    _inch_roll("Generic", None, 3, 1, 203, "3 × 1 in thermal roll"),
    _inch_roll("Generic", None, 2, 1, 203, "2 × 1 in thermal roll (barcode, asset labels)"),
    _inch_roll("Generic", None, 1.5, 1, 203, "1.5 × 1 in thermal roll (small product labels)"),
    # Logistics formats (DHL, DPD, GLS, UPS in Europe; GS1 logistic label A6).
    _mm("a6-203", "Generic", None, 105, 148, 203, "A6 105 × 148 mm logistics label"),
    _mm(
        "100x150-203",
        "Generic",
        None,
        100,
        150,
        203,
        "100 × 150 mm parcel label (DHL, DPD, GLS, UPS Europe)",
    ),
    _mm(
        "100x150-300",
        "Generic",
        None,
        100,
        150,
        300,
        "100 × 150 mm parcel label on a 300 dpi printer",
    ),
    # Brother QL (300 dpi) DK rolls; QL-1100 series for the 102 mm ones.
    _mm(
        "brother-dk-11201", "Brother", "DK-11201", 29, 90, 300, "Standard address labels 29 × 90 mm"
    ),
    _mm("brother-dk-11202", "Brother", "DK-11202", 62, 100, 300, "Shipping labels 62 × 100 mm"),
    _mm("brother-dk-11204", "Brother", "DK-11204", 17, 54, 300, "Multi-purpose labels 17 × 54 mm"),
    _mm("brother-dk-11208", "Brother", "DK-11208", 38, 90, 300, "Large address labels 38 × 90 mm"),
    _mm("brother-dk-11209", "Brother", "DK-11209", 29, 62, 300, "Small address labels 29 × 62 mm"),
    _mm(
        "brother-dk-11240",
        "Brother",
        "DK-11240",
        102,
        51,
        300,
        "Large multi-purpose labels 102 × 51 mm (QL-1100 series)",
    ),
    _mm(
        "brother-dk-11241",
        "Brother",
        "DK-11241",
        102,
        152,
        300,
        "Large shipping labels 102 × 152 mm (QL-1100 series)",
    ),
    _mm(
        "brother-dk-22205",
        "Brother",
        "DK-22205",
        62,
        100,
        300,
        "Continuous paper tape 62 mm, cut at a default length of 100 mm",
        media="continuous",
    ),
    # Dymo LabelWriter (300 dpi).
    _mm(
        "dymo-99010", "Dymo", "99010", 28, 89, 300, "LabelWriter standard address labels 28 × 89 mm"
    ),
    _mm("dymo-99012", "Dymo", "99012", 36, 89, 300, "LabelWriter large address labels 36 × 89 mm"),
    _mm("dymo-99014", "Dymo", "99014", 54, 101, 300, "LabelWriter shipping labels 54 × 101 mm"),
    _mm("dymo-11354", "Dymo", "11354", 57, 32, 300, "LabelWriter multi-purpose labels 57 × 32 mm"),
    _mm("dymo-30256", "Dymo", "30256", 59, 102, 300, "LabelWriter shipping labels 59 × 102 mm"),
)

_BY_ID = {preset.id: preset for preset in PRESETS}


def get_preset(id: str) -> MediaPreset | None:
    return _BY_ID.get(id)
