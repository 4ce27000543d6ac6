"""Vorlagen: complete label documents people print every day, ready to copy and adapt.

Each Vorlage is a valid `LabelDocument` (as a dict) with declared, described variables, samples
for previews, computed variables in CEL where the domain has a rule (GS1 check digits, element
strings, best-before dates, unit prices), and a layout in mm that fits its media preset. GS1 data
is written in `(AI)value` notation; the samples carry valid check digits. Positions are top-left
anchors; barcodes keep their quiet zones clear (10 modules beside linear codes).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from etikett.catalog.presets import get_preset
from etikett.dsl.label import LabelDocument

Category = Literal["logistics", "shipping", "retail", "assets", "healthcare", "warehouse"]
VORLAGE_ID = r"^[a-z0-9]+(?:-[a-z0-9]+)*$"


class Vorlage(BaseModel):
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


def sample_values(vorlage: Vorlage) -> dict[str, Any]:
    """The sample of every entered (not computed) variable that has one: print data for previews."""
    return {
        variable["name"]: variable["sample"]
        for variable in vorlage.document.get("variables", [])
        if variable.get("expression") is None and variable.get("sample") is not None
    }


# --- Builders: plain dicts, defaults left out so the documents read like what people write. ----


def _var(
    name: str,
    type: str,
    description: str,
    *,
    sample: Any = None,
    default: Any = None,
    required: bool = False,
    expression: str | None = None,
) -> dict[str, Any]:
    variable: dict[str, Any] = {"name": name, "type": type, "description": description}
    if expression is not None:
        variable["expression"] = expression
    if sample is not None:
        variable["sample"] = sample
    if default is not None:
        variable["default"] = default
    if required:
        variable["required"] = True
    return variable


def _text(
    id: str,
    x: float,
    y: float,
    *,
    content: str | None = None,
    expr: str | None = None,
    size: float = 10,
    weight: int = 500,
    font: str | None = None,
    w: float | None = None,
    h: float | None = None,
    align: str | None = None,
    wrap: bool = False,
    shrink: bool = False,
    max_lines: int | None = None,
    rotation: int = 0,
) -> dict[str, Any]:
    obj: dict[str, Any] = {"type": "text", "id": id, "x_mm": x, "y_mm": y}
    if rotation:
        obj["rotation"] = rotation
    obj.update({"content": content} if expr is None else {"expression": expr})
    obj["size_pt"] = size
    obj["weight"] = weight
    optional = {"font": font, "width_mm": w, "height_mm": h, "align": align, "max_lines": max_lines}
    obj.update({key: value for key, value in optional.items() if value is not None})
    if wrap:
        obj["wrap"] = True
    if shrink:
        obj["shrink_to_fit"] = True
    return obj


def _caption(id: str, x: float, y: float, text: str, size: float = 6) -> dict[str, Any]:
    """A data title: small, bold, upper case (GS1 logistic label style)."""
    return _text(id, x, y, content=text, size=size, weight=700)


def _code(
    id: str,
    x: float,
    y: float,
    symbology: str,
    expr: str,
    *,
    module_dots: int,
    height: float | None = None,
    human_readable: bool = True,
    text_size: float | None = None,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": "barcode",
        "id": id,
        "x_mm": x,
        "y_mm": y,
        "expression": expr,
        "symbology": symbology,
        "module_width_dots": module_dots,
    }
    if height is not None:
        obj["height_mm"] = height
    if not human_readable:
        obj["human_readable"] = False
    if text_size is not None:
        obj["text_size_pt"] = text_size
    return obj


def _line(
    id: str, x: float, y: float, length: float, thickness: float = 0.5, *, down: bool = False
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": "line",
        "id": id,
        "x_mm": x,
        "y_mm": y,
        "length_mm": length,
        "thickness_mm": thickness,
    }
    if down:
        obj["rotation"] = 90
    return obj


def _box(
    id: str,
    x: float,
    y: float,
    w: float,
    h: float,
    line: float = 0.5,
    *,
    radius: float = 0,
    fill: bool = False,
) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "type": "box",
        "id": id,
        "x_mm": x,
        "y_mm": y,
        "width_mm": w,
        "height_mm": h,
        "line_mm": line,
    }
    if radius:
        obj["corner_radius_mm"] = radius
    if fill:
        obj["fill"] = True
    return obj


def _document(
    preset_id: str, variables: list[dict[str, Any]], objects: list[dict[str, Any]]
) -> dict[str, Any]:
    preset = get_preset(preset_id)
    assert preset is not None, preset_id
    return {
        "size": {"width_mm": preset.width_mm, "height_mm": preset.height_mm},
        "dpi": preset.dpi,
        "variables": variables,
        "objects": objects,
    }


# The SSCC: extension digit, GS1 company prefix, serial reference (17 digits), check digit.
SSCC_EXPRESSION = (
    "with_check_digit(string(extension_digit) + company_prefix"
    " + pad(serial_reference, 16 - size(company_prefix)))"
)


# EU unit pricing: the price per kilogram or litre of a quantity given in g or ml.
UNIT_PRICE_EXPRESSION = (
    '(unit == "ml" ? "1 l = " : "1 kg = ")'
    " + format_number(price / double(net_quantity) * 1000.0, 2)"
    ' + " " + currency'
)


def _gs1_logistic_label() -> Vorlage:
    """GS1 logistic label, 4 × 6 in: addresses, data titles, content barcodes, SSCC at the foot."""
    w = 101.6
    variables = [
        _var(
            "from_name",
            "string",
            "Shipper (the party that built the logistic unit).",
            sample="Muster Lebensmittel GmbH",
            required=True,
        ),
        _var(
            "from_address",
            "string",
            "Shipper's address on one line.",
            sample="Industriestraße 12, DE-50667 Köln",
            required=True,
        ),
        _var(
            "to_name", "string", "Consignee.", sample="Frischemarkt Zentrallager Süd", required=True
        ),
        _var(
            "to_street",
            "string",
            "Consignee's street and number.",
            sample="Lagerweg 5",
            required=True,
        ),
        _var("to_postcode", "string", "Consignee's postcode.", sample="85748", required=True),
        _var("to_city", "string", "Consignee's city.", sample="Garching", required=True),
        _var("to_country", "string", "Consignee's ISO 3166 country code.", default="DE"),
        _var(
            "extension_digit",
            "integer",
            "SSCC extension digit (0-9), chosen by the company.",
            default=3,
        ),
        _var(
            "company_prefix",
            "string",
            "Your GS1 company prefix (7-10 digits).",
            sample="4012345",
            required=True,
        ),
        _var(
            "serial_reference",
            "integer",
            "Serial reference of this unit, unique for the "
            "company prefix (usually the next value of a counter).",
            sample=123456789,
            required=True,
        ),
        _var(
            "sscc",
            "string",
            "SSCC with its GS1 check digit (18 digits).",
            expression=SSCC_EXPRESSION,
        ),
        _var(
            "content_gtin",
            "string",
            "GTIN-14 of the trade items contained, with check digit.",
            sample="14012345000013",
            required=True,
        ),
        _var("count", "integer", "Number of trade items contained.", sample=48, required=True),
        _var("batch", "string", "Batch or lot number.", sample="L2405A", required=True),
        _var(
            "production_date",
            "date",
            "Production date of the batch.",
            sample="2025-05-14",
            required=True,
        ),
        _var("shelf_life_days", "integer", "Shelf life from production, in days.", default=180),
        _var(
            "best_before",
            "date",
            "Best-before date: production date plus shelf life.",
            expression="add_days(production_date, shelf_life_days)",
        ),
    ]
    objects = [
        _caption("from_title", 3, 2.2, "FROM"),
        _text("from_name", 14, 1.8, expr="from_name", size=8, weight=600, w=84.6, shrink=True),
        _text("from_address", 14, 5.6, expr="from_address", size=8, w=84.6, shrink=True),
        _line("from_to_rule", 0, 10.5, w, 0.3),
        _caption("to_title", 3, 12.4, "TO"),
        _text("ship_to_name", 14, 12, expr="to_name", size=13, weight=700, w=84.6, shrink=True),
        _text("ship_to_street", 14, 18.2, expr="to_street", size=11, w=84.6, shrink=True),
        _text(
            "ship_to_city",
            14,
            23.4,
            expr='to_country + "-" + to_postcode + " " + to_city',
            size=13,
            weight=700,
            w=84.6,
            shrink=True,
        ),
        _line("address_rule", 0, 30.5, w, 0.6),
        _caption("sscc_title", 3, 32, "SSCC", 7),
        _text("sscc_text", 3, 34.8, expr="sscc", size=15, weight=700, font="Roboto Mono"),
        _line("sscc_rule", 0, 43.2, w, 0.3),
        _caption("content_title", 3, 44.4, "CONTENT (GTIN)", 7),
        _text("content_text", 3, 47.2, expr="content_gtin", size=11, weight=600),
        _caption("count_title", 62, 44.4, "COUNT", 7),
        _text("count_text", 62, 47.2, expr="string(count)", size=11, weight=600),
        _caption("batch_title", 3, 52.8, "BATCH/LOT", 7),
        _text("batch_text", 3, 55.6, expr="batch", size=11, weight=600, w=54, shrink=True),
        _caption("best_before_title", 62, 52.8, "BEST BEFORE", 7),
        _text(
            "best_before_text",
            62,
            55.6,
            expr='format_date(best_before, "%d.%m.%Y")',
            size=11,
            weight=600,
        ),
        _line("data_divider", 59, 43.2, 18.6, 0.3, down=True),
        _line("data_rule", 0, 61.8, w, 0.6),
        _code(
            "content_barcode",
            8,
            65,
            "gs1-128",
            '"(02)" + content_gtin + "(37)" + string(count)',
            module_dots=3,
            height=17,
        ),
        _code(
            "batch_barcode",
            8,
            89,
            "gs1-128",
            '"(15)" + format_date(best_before, "%y%m%d") + "(10)" + batch',
            module_dots=3,
            height=17,
        ),
        _code(
            "sscc_barcode",
            11.8,
            113,
            "gs1-128",
            '"(00)" + sscc',
            module_dots=4,
            height=30,
            text_size=10,
        ),
    ]
    return Vorlage(
        id="gs1-logistic-label",
        name="GS1 logistic label (SSCC)",
        description="The GS1 logistic label for cartons and pallets, 4 × 6 in: shipper and "
        "consignee, data titles for SSCC, content, count, batch and best-before, "
        "content GS1-128 symbols (02)+(37) and (15)+(10), and the SSCC (00) at the "
        "foot with X = 0.5 mm. The SSCC check digit and the best-before date are "
        "computed.",
        category="logistics",
        preset_id="zebra-4x6-203",
        document=_document("zebra-4x6-203", variables, objects),
    )


def _shipping_label() -> Vorlage:
    """Parcel label 100 × 150 mm: sender, service, big consignee block, Code 128 tracking."""
    w = 100.0
    variables = [
        _var(
            "sender_name",
            "string",
            "Sender (company or person).",
            sample="Etikett Versand GmbH",
            required=True,
        ),
        _var(
            "sender_street",
            "string",
            "Sender's street and number.",
            sample="Hafenstraße 21",
            required=True,
        ),
        _var("sender_postcode", "string", "Sender's postcode.", sample="20457", required=True),
        _var("sender_city", "string", "Sender's city.", sample="Hamburg", required=True),
        _var("sender_country", "string", "Sender's ISO 3166 country code.", default="DE"),
        _var(
            "service",
            "string",
            "Carrier service printed in the service box.",
            default="PAKET",
            sample="EXPRESS",
        ),
        _var("weight_kg", "number", "Parcel weight in kg.", sample=2.4, required=True),
        _var("recipient_name", "string", "Recipient.", sample="Erika Mustermann", required=True),
        _var(
            "recipient_company",
            "string",
            "Recipient's company or c/o line (optional).",
            default="",
            sample="Beispiel AG, Wareneingang",
        ),
        _var(
            "recipient_street",
            "string",
            "Recipient's street and number.",
            sample="Heidestraße 17",
            required=True,
        ),
        _var(
            "recipient_postcode", "string", "Recipient's postcode.", sample="51147", required=True
        ),
        _var("recipient_city", "string", "Recipient's city.", sample="Köln", required=True),
        _var(
            "recipient_country", "string", "Recipient's country, in words.", default="Deutschland"
        ),
        _var(
            "reference",
            "string",
            "Order or customer reference (optional).",
            default="",
            sample="SO-2025-004711",
        ),
        _var(
            "tracking_number",
            "string",
            "Carrier tracking number (UPU S10 or carrier format).",
            sample="ET123456785DE",
            required=True,
        ),
        _var(
            "tracking_url",
            "string",
            "Tracking page of this parcel.",
            expression='"https://track.example.com/" + tracking_number',
        ),
        _var("parcel_number", "integer", "This parcel's number within the shipment.", default=1),
        _var("parcel_count", "integer", "Number of parcels in the shipment.", default=1, sample=2),
        _var(
            "notes",
            "string",
            "Delivery notes (optional).",
            default="",
            sample="Bitte an der Rampe 3 abgeben.",
        ),
    ]
    objects = [
        _caption("from_title", 3, 3, "FROM"),
        _text("sender_name", 3, 5.8, expr="sender_name", size=8, weight=600, w=55, shrink=True),
        _text("sender_street", 3, 9.4, expr="sender_street", size=8, w=55, shrink=True),
        _text(
            "sender_city",
            3,
            13,
            expr='sender_country + "-" + sender_postcode + " " + sender_city',
            size=8,
            w=55,
            shrink=True,
        ),
        _box("service_box", 62, 3, 35, 16, 0.6),
        _text(
            "service_text",
            63,
            4.5,
            expr="upper(service)",
            size=18,
            weight=800,
            w=33,
            align="center",
            shrink=True,
        ),
        _text(
            "weight_text",
            63,
            13.3,
            expr='format_number(weight_kg, 1) + " kg"',
            size=10,
            weight=600,
            w=33,
            align="center",
        ),
        _line("header_rule", 0, 21.5, w, 0.6),
        _caption("to_title", 3, 23.5, "TO", 7),
        _text(
            "ship_to_name", 8, 27.5, expr="recipient_name", size=16, weight=700, w=89, shrink=True
        ),
        _text("ship_to_company", 8, 35, expr="recipient_company", size=12, w=89, shrink=True),
        _text("ship_to_street", 8, 41, expr="recipient_street", size=14, w=89, shrink=True),
        _text(
            "ship_to_city",
            8,
            48,
            expr='recipient_postcode + " " + upper(recipient_city)',
            size=16,
            weight=700,
            w=89,
            shrink=True,
        ),
        _text(
            "ship_to_country",
            8,
            55.5,
            expr="upper(recipient_country)",
            size=14,
            weight=700,
            w=89,
            shrink=True,
        ),
        _line("address_rule", 0, 64, w, 0.6),
        _caption("reference_title", 3, 66, "REFERENCE"),
        _text("reference_text", 3, 68.6, expr="reference", size=10, w=50, shrink=True),
        _caption("ship_date_title", 58, 66, "SHIP DATE"),
        _text("ship_date_text", 58, 68.6, expr='format_date(now, "%d.%m.%Y")', size=10),
        _line("reference_rule", 0, 75, w, 0.3),
        _caption("tracking_title", 3, 77, "TRACKING NUMBER"),
        _code(
            "tracking_barcode",
            10,
            81,
            "code128",
            "tracking_number",
            module_dots=3,
            height=28,
            text_size=11,
        ),
        _line("tracking_rule", 0, 117, w, 0.6),
        _caption("parcel_title", 3, 119, "PARCEL"),
        _text(
            "parcel_text",
            3,
            122,
            expr='string(parcel_number) + " / " + string(parcel_count)',
            size=28,
            weight=800,
        ),
        _code("tracking_qr", 77, 120, "qr", "tracking_url", module_dots=4),
        _text(
            "notes_text",
            3,
            137,
            expr="notes",
            size=8,
            w=68,
            h=9.5,
            wrap=True,
            max_lines=2,
            shrink=True,
        ),
    ]
    return Vorlage(
        id="shipping-label",
        name="Parcel shipping label",
        description="A 100 × 150 mm parcel label: sender, service box with weight, large "
        "recipient block, reference and ship date, Code 128 tracking number with a "
        "tracking-page QR code, parcel n / m and delivery notes.",
        category="shipping",
        preset_id="100x150-203",
        document=_document("100x150-203", variables, objects),
    )


def _product_label() -> Vorlage:
    """Retail product label 3 × 2 in: name, EAN-13 (computed check digit), price, unit price."""
    variables = [
        _var(
            "product_name",
            "string",
            "Product name (up to two lines).",
            sample="Bio Bergkäse am Stück, 12 Monate gereift",
            required=True,
        ),
        _var(
            "product_detail",
            "string",
            "Second line: variety, origin, organic code (optional).",
            default="",
            sample="Ursprung: Allgäu · DE-ÖKO-006",
        ),
        _var(
            "gtin_base",
            "string",
            "The first 12 digits of the GTIN-13 (GS1 prefix, company prefix, item reference).",
            sample="401234500001",
            required=True,
        ),
        _var(
            "gtin",
            "string",
            "GTIN-13 with its check digit.",
            expression="with_check_digit(gtin_base)",
        ),
        _var("price", "number", "Selling price.", sample=4.99, required=True),
        _var("currency", "string", "Currency shown after the price.", default="EUR"),
        _var("net_quantity", "integer", "Net quantity in g or ml.", sample=250, required=True),
        _var("unit", "string", "Unit of the net quantity: g or ml.", default="g"),
        _var(
            "unit_price",
            "string",
            "Price per kg or litre (EU unit pricing).",
            expression=UNIT_PRICE_EXPRESSION,
        ),
    ]
    objects = [
        _text(
            "product_name",
            3,
            2.5,
            expr="product_name",
            size=12,
            weight=700,
            w=70.2,
            h=10.5,
            wrap=True,
            max_lines=2,
            shrink=True,
        ),
        _text("product_detail", 3, 13.5, expr="product_detail", size=8, w=70.2, shrink=True),
        _line("name_rule", 3, 18, 70.2, 0.3),
        _code("ean_barcode", 7.5, 21, "ean13", "gtin", module_dots=3, height=20, text_size=9),
        _text(
            "price_text",
            47.5,
            21.5,
            expr="format_number(price, 2)",
            size=22,
            weight=800,
            w=26,
            align="right",
            shrink=True,
        ),
        _text(
            "currency_text", 47.5, 31.5, expr="currency", size=9, weight=600, w=26, align="right"
        ),
        _text(
            "unit_price_text",
            47.5,
            36.5,
            expr="unit_price",
            size=7,
            w=26,
            align="right",
            shrink=True,
        ),
        _text(
            "net_quantity_text",
            47.5,
            41,
            expr='string(net_quantity) + " " + unit',
            size=9,
            weight=700,
            w=26,
            align="right",
        ),
    ]
    return Vorlage(
        id="product-label-ean13",
        name="Product label with EAN-13 and price",
        description="A 3 × 2 in retail product label: product name and detail, EAN-13 at 113 % "
        "magnification (X = 0.375 mm) with the check digit computed from the first "
        "12 digits, price, net quantity and the EU unit price per kg or litre.",
        category="retail",
        preset_id="zebra-3x2-203",
        document=_document("zebra-3x2-203", variables, objects),
    )


def _asset_tag() -> Vorlage:
    """Asset tag 2 × 1 in: QR code to the asset's page, owner, asset id, name, support."""
    variables = [
        _var(
            "owner",
            "string",
            "Organisation that owns the asset.",
            sample="Muster GmbH",
            required=True,
        ),
        _var("asset_prefix", "string", "Asset class prefix, e.g. IT, FM, LAB.", default="IT"),
        _var("asset_number", "integer", "Running asset number.", sample=4711, required=True),
        _var(
            "asset_id",
            "string",
            "Asset id: prefix and six-digit number.",
            expression='asset_prefix + "-" + pad(asset_number, 6)',
        ),
        _var(
            "asset_name",
            "string",
            "What the asset is (optional).",
            default="",
            sample="Notebook ThinkPad T14 Gen 4",
        ),
        _var(
            "base_url",
            "string",
            "Asset register URL the asset id is appended to.",
            default="https://assets.example.com/a/",
        ),
        _var(
            "asset_url",
            "string",
            "The asset's page in the register.",
            expression="base_url + asset_id",
        ),
        _var(
            "support_contact",
            "string",
            "Who to call about the asset.",
            default="",
            sample="IT-Service -4711",
        ),
    ]
    objects = [
        _code("asset_qr", 2.5, 3.5, "qr", "asset_url", module_dots=4),
        _text(
            "owner_text",
            19.5,
            2.5,
            expr='"PROPERTY OF " + upper(owner)',
            size=6,
            weight=700,
            w=29,
            shrink=True,
        ),
        _text(
            "asset_id_text",
            19.5,
            6,
            expr="asset_id",
            size=14,
            weight=700,
            font="Roboto Condensed",
            w=29,
            shrink=True,
        ),
        _text(
            "asset_name_text",
            19.5,
            12.5,
            expr="asset_name",
            size=7,
            w=29,
            h=6,
            wrap=True,
            max_lines=2,
            shrink=True,
        ),
        _line("support_rule", 19.5, 19.2, 29, 0.25),
        _text("support_text", 19.5, 19.9, expr="support_contact", size=6, w=29, shrink=True),
    ]
    return Vorlage(
        id="asset-tag-qr",
        name="Asset tag with QR code",
        description="A 2 × 1 in asset tag: QR code linking to the asset's page (register URL "
        "plus asset id), owner, asset id built from prefix and number, asset name "
        "and support contact.",
        category="assets",
        preset_id="roll-2x1-203",
        document=_document("roll-2x1-203", variables, objects),
    )


def _udi_label() -> Vorlage:
    """GS1 DataMatrix UDI / pharma label at 300 dpi with human-readable GTIN, SN, LOT, EXP."""
    variables = [
        _var(
            "product_name",
            "string",
            "Product name and strength.",
            sample="Ibuprofen 400 mg · 20 Filmtabletten",
            required=True,
        ),
        _var(
            "gtin",
            "string",
            "GTIN-14 of the pack (for GTIN-13 prefix a 0), with check digit.",
            sample="09501101530003",
            required=True,
        ),
        _var("expiry_date", "date", "Expiry date.", sample="2027-01-31", required=True),
        _var("batch", "string", "Batch or lot number.", sample="24B17", required=True),
        _var(
            "serial",
            "string",
            "Serial number of this pack (up to 20 characters).",
            sample="A1B2C3D4E5",
            required=True,
        ),
        _var(
            "manufacturer",
            "string",
            "Manufacturer or marketing authorisation holder.",
            sample="Muster Pharma GmbH, Köln",
            required=True,
        ),
        _var(
            "udi",
            "string",
            "GS1 element string: (01) GTIN, (17) expiry, (10) batch, (21) serial.",
            expression='"(01)" + gtin + "(17)" + format_date(expiry_date, "%y%m%d")'
            ' + "(10)" + batch + "(21)" + serial',
        ),
    ]
    mono = {"size": 7.0, "weight": 500, "font": "Roboto Mono", "w": 35.5, "shrink": True}
    objects = [
        _text(
            "product_name", 2.5, 2, expr="product_name", size=8, weight=700, w=52.15, shrink=True
        ),
        _code("udi_datamatrix", 2.5, 6.5, "gs1-datamatrix", "udi", module_dots=5),
        _text("gtin_text", 19, 7, expr='"GTIN " + gtin', **mono),
        _text("serial_text", 19, 10.5, expr='"SN   " + serial', **mono),
        _text("batch_text", 19, 14, expr='"LOT  " + batch', **mono),
        _text(
            "expiry_text", 19, 17.5, expr='"EXP  " + format_date(expiry_date, "%Y-%m-%d")', **mono
        ),
        _line("udi_rule", 2.5, 22, 52.15, 0.25),
        _text("udi_text", 2.5, 23, expr="udi", size=6, w=52.15, shrink=True),
        _text("manufacturer_text", 2.5, 26.6, expr="manufacturer", size=6, w=52.15, shrink=True),
    ]
    return Vorlage(
        id="udi-datamatrix",
        name="GS1 DataMatrix pharma / UDI label",
        description="A 2.25 × 1.25 in label at 300 dpi for medicine packs (EU FMD) and medical "
        "devices (UDI): GS1 DataMatrix with (01) GTIN, (17) expiry, (10) batch and "
        "(21) serial, the human-readable GTIN/SN/LOT/EXP lines and the element "
        "string.",
        category="healthcare",
        preset_id="zebra-2.25x1.25-300",
        document=_document("zebra-2.25x1.25-300", variables, objects),
    )


def _pallet_label() -> Vorlage:
    """Pallet label 4 × 6 in: destination in large type, pallet n of m, weight, Code 128 id."""
    w = 101.6
    variables = [
        _var(
            "shipper",
            "string",
            "Shipping site.",
            sample="Muster Logistik GmbH · Werk Neuss",
            required=True,
        ),
        _var(
            "destination_code",
            "string",
            "Destination code (DC, dock, route).",
            sample="DC-MUC-07",
            required=True,
        ),
        _var(
            "destination_name",
            "string",
            "Destination in words.",
            sample="Zentrallager München, Tor 7",
            required=True,
        ),
        _var(
            "pallet_index",
            "integer",
            "This pallet's number within the shipment.",
            default=1,
            sample=3,
        ),
        _var("pallet_count", "integer", "Pallets in the shipment.", default=1, sample=8),
        _var(
            "gross_weight_kg",
            "number",
            "Gross weight including the pallet, kg.",
            sample=612.5,
            required=True,
        ),
        _var(
            "order_number",
            "string",
            "Order or delivery number.",
            sample="LS-2025-118204",
            required=True,
        ),
        _var("ship_date", "date", "Ship date.", sample="2025-05-20", required=True),
        _var("pallet_prefix", "string", "Pallet id prefix.", default="PAL"),
        _var(
            "pallet_number",
            "integer",
            "Running pallet number (usually a counter).",
            sample=12345,
            required=True,
        ),
        _var(
            "pallet_id",
            "string",
            "Pallet id: prefix and eight-digit number.",
            expression="pallet_prefix + pad(pallet_number, 8)",
        ),
        _var(
            "handling",
            "string",
            "Handling instruction (optional).",
            default="",
            sample="NICHT STAPELN · DO NOT STACK",
        ),
    ]
    objects = [
        _text("shipper_text", 3, 3, expr="shipper", size=8, weight=600, w=95.6, shrink=True),
        _line("shipper_rule", 0, 8, w, 0.5),
        _caption("destination_title", 3, 10, "DESTINATION", 7),
        _text(
            "destination_code",
            3,
            13,
            expr="destination_code",
            size=48,
            weight=900,
            font="Roboto Condensed",
            w=95.6,
            shrink=True,
        ),
        _text(
            "destination_name",
            3,
            33.5,
            expr="destination_name",
            size=12,
            weight=600,
            w=95.6,
            shrink=True,
        ),
        _line("destination_rule", 0, 41, w, 0.5),
        _caption("pallet_of_title", 3, 43, "PALLET", 7),
        _text(
            "pallet_of_text",
            3,
            46,
            expr='string(pallet_index) + " of " + string(pallet_count)',
            size=24,
            weight=800,
            w=44,
            shrink=True,
        ),
        _caption("weight_title", 52, 43, "GROSS WEIGHT", 7),
        _text(
            "weight_text",
            52,
            46,
            expr='format_number(gross_weight_kg, 1) + " kg"',
            size=24,
            weight=800,
            w=46.6,
            shrink=True,
        ),
        _line("pallet_divider", 49, 41, 18, 0.5, down=True),
        _line("pallet_rule", 0, 59, w, 0.5),
        _caption("order_title", 3, 61, "ORDER", 7),
        _text("order_text", 3, 64, expr="order_number", size=12, weight=600, w=44, shrink=True),
        _caption("ship_date_title", 52, 61, "SHIP DATE", 7),
        _text(
            "ship_date_text", 52, 64, expr='format_date(ship_date, "%d.%m.%Y")', size=12, weight=600
        ),
        _line("order_divider", 49, 59, 12, 0.5, down=True),
        _line("order_rule", 0, 71, w, 0.5),
        _caption("pallet_id_title", 3, 73, "PALLET ID", 7),
        _text("pallet_id_text", 3, 76, expr="pallet_id", size=20, weight=700, font="Roboto Mono"),
        _code(
            "pallet_id_barcode",
            10,
            90,
            "code128",
            "pallet_id",
            module_dots=4,
            height=40,
            human_readable=False,
        ),
        _text(
            "handling_text",
            3,
            137,
            expr="handling",
            size=14,
            weight=800,
            w=95.6,
            align="center",
            shrink=True,
        ),
    ]
    return Vorlage(
        id="pallet-label",
        name="Pallet label",
        description="A 4 × 6 in pallet label: destination code in 48 pt, destination, pallet "
        "n of m, gross weight, order and ship date, pallet id in large type and as "
        "Code 128 (X = 0.5 mm, 40 mm high), and a handling instruction.",
        category="logistics",
        preset_id="zebra-4x6-203",
        document=_document("zebra-4x6-203", variables, objects),
    )


def _shelf_label() -> Vorlage:
    """Shelf-edge label 60 × 40 mm: name, price, unit price, small EAN-13, article number."""
    variables = [
        _var(
            "product_name",
            "string",
            "Product name (up to two lines).",
            sample="Vollmilch 3,8 % Fett, frisch",
            required=True,
        ),
        _var(
            "detail",
            "string",
            "Pack size, origin, grade (optional).",
            default="",
            sample="1 l · Weidemilch · Bayern",
        ),
        _var("price", "number", "Shelf price.", sample=1.39, required=True),
        _var("currency", "string", "Currency shown under the price.", default="EUR"),
        _var("net_quantity", "integer", "Net quantity in g or ml.", sample=1000, required=True),
        _var("unit", "string", "Unit of the net quantity: g or ml.", default="g", sample="ml"),
        _var(
            "unit_price",
            "string",
            "Price per kg or litre (EU unit pricing).",
            expression=UNIT_PRICE_EXPRESSION,
        ),
        _var(
            "gtin",
            "string",
            "GTIN-13 of the product, with check digit.",
            sample="4012345000023",
            required=True,
        ),
        _var(
            "article_number", "string", "Internal article number.", sample="218834", required=True
        ),
    ]
    objects = [
        _text(
            "product_name",
            2.5,
            2,
            expr="product_name",
            size=10,
            weight=700,
            w=55,
            h=9,
            wrap=True,
            max_lines=2,
            shrink=True,
        ),
        _text("detail_text", 2.5, 11.8, expr="detail", size=7, w=55, shrink=True),
        _line("name_rule", 2.5, 15.8, 55, 0.3),
        _code("ean_barcode", 4, 18, "ean13", "gtin", module_dots=2, height=11, text_size=6),
        _text("article_text", 4, 33.3, expr='"Art. " + article_number', size=6, w=25, shrink=True),
        _text(
            "price_text",
            31,
            17,
            expr="format_number(price, 2)",
            size=26,
            weight=800,
            w=26.5,
            align="right",
            shrink=True,
        ),
        _text(
            "currency_text", 31, 28.3, expr="currency", size=8, weight=700, w=26.5, align="right"
        ),
        _text(
            "unit_price_text",
            31,
            32.3,
            expr="unit_price",
            size=6,
            w=26.5,
            align="right",
            shrink=True,
        ),
        _text(
            "date_text",
            31,
            35.5,
            expr='format_date(now, "%d.%m.%Y")',
            size=5,
            w=26.5,
            align="right",
        ),
    ]
    return Vorlage(
        id="shelf-label",
        name="Shelf-edge label",
        description="A 60 × 40 mm shelf-edge label at 203 dpi: product name, detail line, "
        "price in 26 pt, currency, unit price, small EAN-13 (X = 0.25 mm) for "
        "handheld scanners, article number and print date.",
        category="retail",
        preset_id=None,
        document={
            "size": {"width_mm": 60, "height_mm": 40},
            "dpi": 203,
            "variables": variables,
            "objects": objects,
        },
    )


def _case_label() -> Vorlage:
    """Outer case label 4 × 3 in: product, contents, batch, ITF-14 of the case GTIN-14."""
    w = 101.6
    variables = [
        _var(
            "product_name",
            "string",
            "Product (up to two lines).",
            sample="Bio Apfelsaft naturtrüb, Glasflasche",
            required=True,
        ),
        _var(
            "gtin_base",
            "string",
            "The first 12 digits of the item's GTIN-13.",
            sample="401234500002",
            required=True,
        ),
        _var(
            "indicator", "integer", "GTIN-14 indicator digit of this case level (1-8).", default=1
        ),
        _var(
            "item_gtin",
            "string",
            "GTIN-13 of the consumer unit.",
            expression="with_check_digit(gtin_base)",
        ),
        _var(
            "case_gtin",
            "string",
            "GTIN-14 of the case: indicator, item digits, new check digit.",
            expression="with_check_digit(string(indicator) + gtin_base)",
        ),
        _var("count", "integer", "Consumer units in the case.", sample=6, required=True),
        _var("item_size", "string", "Size of one consumer unit.", sample="1 l", required=True),
        _var("batch", "string", "Batch or lot number (optional).", default="", sample="AS-25-118"),
    ]
    objects = [
        _text(
            "product_name",
            3,
            3,
            expr="product_name",
            size=14,
            weight=700,
            w=95.6,
            h=12,
            wrap=True,
            max_lines=2,
            shrink=True,
        ),
        _caption("contents_title", 3, 16.5, "CONTENTS"),
        _text(
            "contents_text",
            3,
            19,
            expr='string(count) + " × " + item_size',
            size=11,
            weight=600,
            w=46,
            shrink=True,
        ),
        _caption("batch_title", 52, 16.5, "BATCH/LOT"),
        _text("batch_text", 52, 19, expr="batch", size=11, weight=600, w=46.6, shrink=True),
        _line("contents_rule", 3, 25.5, w - 6, 0.3),
        # Bearer bars (a frame outside the quiet zones) keep short scans across ITF-14 out.
        _box("case_barcode_bearer", 10.5, 28, 81, 35, 1.5),
        _code(
            "case_barcode",
            17,
            29.5,
            "itf14",
            "case_gtin",
            module_dots=4,
            height=32,
            human_readable=False,
        ),
        _text(
            "case_gtin_text", 3, 64.5, expr="case_gtin", size=11, weight=600, w=95.6, align="center"
        ),
        _text(
            "item_gtin_text", 3, 71, expr='"ITEM GTIN " + item_gtin', size=7, w=95.6, align="center"
        ),
    ]
    return Vorlage(
        id="case-label-itf14",
        name="Outer case label with ITF-14",
        description="A 4 × 3 in label for shipping cases: product, contents (n × size), batch, "
        "and the case GTIN-14 as ITF-14 (X = 0.5 mm, 32 mm high, bearer bars), derived from the "
        "item's GTIN-13 digits and the indicator digit with a new check digit.",
        category="logistics",
        preset_id="roll-4x3-203",
        document=_document("roll-4x3-203", variables, objects),
    )


# An upward arrow, 144 × 144 dots (18 mm at 203 dpi), 1-bit PNG.
ARROW_UP_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAJAAAACQAQAAAADPPd8VAAABOklEQVR42u3UPW7FIBBF4eNpsmy/pWQpLIUlUKRAEY"
    "IUvh4GXKY1lfXpwRz/6DHudd4XhtZI95VTzw9q5UG1Pqi0B+X+oDTw4Vpwbl0D0raxQ96oQdmoQt2oQNsoQ98owdi6"
    "wMPMszxM9KvzAlVNDVTcnbLuIFDSfQIcV80x5+pXqvwE6mG7qIUhohpSRCUEizJhv4VzNeXqOggPxEKWwixk6QALWR"
    "pjIUsxFrLgx8m/ye7kX+7wl+ZfFqdeWqCkjX1SFrVJRVQnVVGZ1ER5UhelSUNdsITZkgUJbMmCDLZkQQFbsqCCLVnQ"
    "wOA7Uodj+Bu7y2xtgA+2NkDC1gbI2NoABVsboGLx0VxhFh+NwrYGGHsDnPagZG2nbHWnYmWnanmnZmmnxzz/U9CBX+"
    "uf6FwvvfTSSy/9g/4Ax9y+S+MhFv0AAAAASUVORK5CYII="
)


def _warehouse_location() -> Vorlage:
    """Rack location label 4 × 2 in: arrow to the bin, location code, Code 128 of it."""
    variables = [
        _var("aisle", "string", "Aisle (letters).", sample="A", required=True),
        _var("rack", "integer", "Rack (bay) number in the aisle.", sample=1, required=True),
        _var("level", "integer", "Shelf level, from the floor.", sample=3, required=True),
        _var("position", "string", "Position on the level.", sample="B", required=True),
        _var(
            "location",
            "string",
            "Location code, e.g. A-01-03-B.",
            expression='aisle + "-" + pad(rack, 2) + "-" + pad(level, 2) + "-" + position',
        ),
        _var(
            "location_hint",
            "string",
            "Zone, storage type or limits (optional).",
            default="",
            sample="Zone Trocken · Fachlast max. 80 kg",
        ),
    ]
    objects = [
        _box("frame", 1.5, 1.5, 98.6, 47.8, 0.8, radius=2),
        {
            "type": "image",
            "id": "arrow_up",
            "x_mm": 4,
            "y_mm": 16.4,
            "width_mm": 18,
            "height_mm": 18,
            "content_base64": ARROW_UP_PNG,
            "dither": "threshold",
        },
        _line("arrow_divider", 25, 1.5, 47.8, 0.5, down=True),
        _text(
            "location_text",
            27,
            4,
            expr="location",
            size=40,
            weight=800,
            font="Roboto Condensed",
            w=70.6,
            align="center",
            shrink=True,
        ),
        _code(
            "location_barcode",
            36,
            23.5,
            "code128",
            "location",
            module_dots=3,
            height=14,
            human_readable=False,
        ),
        _text(
            "hint_text", 27, 41, expr="location_hint", size=8, w=70.6, align="center", shrink=True
        ),
    ]
    return Vorlage(
        id="warehouse-location",
        name="Warehouse location label",
        description="A 4 × 2 in rack label: arrow up to the bin it names, the location code "
        "(aisle-rack-level-position, e.g. A-01-03-B) in 40 pt, Code 128 of the same "
        "code and a zone hint, in a rounded frame.",
        category="warehouse",
        preset_id="roll-4x2-203",
        document=_document("roll-4x2-203", variables, objects),
    )


VORLAGEN: tuple[Vorlage, ...] = (
    _gs1_logistic_label(),
    _shipping_label(),
    _product_label(),
    _asset_tag(),
    _udi_label(),
    _pallet_label(),
    _shelf_label(),
    _warehouse_location(),
    _case_label(),
)

_BY_ID = {vorlage.id: vorlage for vorlage in VORLAGEN}


def get_vorlage(id: str) -> Vorlage | None:
    return _BY_ID.get(id)
