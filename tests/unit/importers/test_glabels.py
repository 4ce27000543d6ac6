"""gLabels 3 and 4 import: template size, objects in place, merge fields as variables, barcodes
that scan, turned objects, embedded images, gzip — and the report of what was not kept."""

from __future__ import annotations

import base64
import gzip
import io
from pathlib import Path
from typing import Any

import pytest
import zxingcpp
from PIL import Image

from etikett.importers.conversion import Conversion
from etikett.importers.formats import convert
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.render import render, resolve_variables
from etikett_engine.render.preflight import preflight

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"
LIMIT = 8 * 1024 * 1024


def _convert(data: bytes, dpi: int = 300, name: str = "test.glabels") -> Conversion:
    return convert(name, data, dpi=dpi, max_expanded=LIMIT)


def _render(document: dict[str, Any]) -> Image.Image:
    parsed = LabelDocument.model_validate(document)
    return render(parsed, resolve_variables(parsed, {}, use_samples=True))


def _dots(mm: float, dpi: int) -> int:
    return round(mm / 25.4 * dpi)


def _document(objects: str, width: str = "60mm", height: str = "40mm", data: str = "") -> bytes:
    return f"""<?xml version="1.0"?>
<Glabels-document version="4.0">
  <Template brand="Test" part="1" size="roll" description="Test">
    <Label-rectangle id="0" width="{width}" height="{height}" round="0mm"/>
  </Template>
  <Objects id="0" rotate="false">{objects}</Objects>
  <Data>{data}</Data>
</Glabels-document>""".encode()


@pytest.mark.parametrize(
    "name", ["address-v4.glabels", "address-v4-compressed.glabels", "asset-v3.glabels"]
)
def test_fixtures_import_render_and_scan(name: str):
    conversion = _convert((FIXTURES / name).read_bytes(), name=name)
    assert conversion.format == "glabels" and len(conversion.labels) == 1
    label = conversion.labels[0]
    assert label.name == name.rsplit(".", 1)[0]
    parsed = LabelDocument.model_validate(label.document)
    assert [f for f in preflight(parsed) if f.severity == "error"] == []
    decoded = {
        (r.symbology_identifier, r.text) for r in zxingcpp.read_barcodes(_render(label.document))
    }
    if name.startswith("address"):
        assert parsed.size.width_mm == 101.6 and parsed.size.height_mm == 50.8
        assert [v.name for v in parsed.variables] == ["name", "street", "city"]
        assert parsed.objects[0].expression == '"Ship to: " + name'
        assert decoded == {("]C0", "PKG-2026-000417"), ("]d2", "(01)09501101530003(10)LOT42")}
    else:
        assert (parsed.size.width_mm, parsed.size.height_mm) == (38.1, 21.2)
        assert parsed.objects[0].expression == '"Asset " + number'
        assert parsed.objects[0].shrink_to_fit is True
        assert decoded == {("]Q1", "https://assets.example.com/4711")}
        assert any("Italic" in note.message for note in conversion.report)


@pytest.mark.parametrize("dpi", [203, 300])
def test_shapes_keep_their_geometry_within_a_dot(dpi: int):
    objects = """
      <Object-box x="5mm" y="4mm" w="20mm" h="10mm" line_width="0.5mm" line_color="0x000000ff"
                  fill_color="0x00000000"/>
      <Object-box x="30mm" y="4mm" w="10mm" h="10mm" line_width="0.5mm" fill_color="0x000000ff"/>
      <Object-line x="5mm" y="20mm" dx="40mm" dy="0mm" line_width="1mm" line_color="0x000000ff"/>
      <Object-line x="50mm" y="5mm" dx="0mm" dy="30mm" line_width="1mm" line_color="0x000000ff"/>
      <Object-ellipse x="5mm" y="25mm" w="20mm" h="10mm" line_width="0.5mm"/>"""
    conversion = _convert(_document(objects), dpi=dpi)
    image = _render(conversion.labels[0].document)
    ink = Image.eval(image, lambda v: 255 - v)
    expected = [
        (5, 4, 25, 14),
        (30, 4, 40, 14),
        (5, 19.5, 45, 20.5),  # the stroke is centred on the path
        (49.5, 5, 50.5, 35),
        (5, 25, 25, 35),
    ]
    for left, top, right, bottom in expected:
        box = tuple(_dots(v, dpi) for v in (left, top, right, bottom))
        region = (box[0] - 4, box[1] - 4, box[2] + 4, box[3] + 4)
        found = ink.crop(region).getbbox()
        assert found is not None
        placed = (
            found[0] + region[0],
            found[1] + region[1],
            found[2] + region[0],
            found[3] + region[1],
        )
        assert all(abs(a - e) <= 1 for a, e in zip(placed, box, strict=True)), (placed, box)


def test_quarter_turns_and_other_transforms():
    objects = """
      <Object-text x="20mm" y="5mm" w="20mm" h="5mm" a0="0" a1="1" a2="-1" a3="0" a4="0" a5="0">
        <p>Turned</p></Object-text>
      <Object-box x="40mm" y="30mm" w="10mm" h="5mm" line_width="0.3mm"
                  a0="-1" a1="0" a2="0" a3="-1"/>
      <Object-box x="5mm" y="30mm" w="10mm" h="5mm" line_width="0.3mm"
                  a0="0.7" a1="0.7" a2="-0.7" a3="0.7"/>"""
    conversion = _convert(_document(objects))
    turned, upside_down, skewed = conversion.labels[0].document["objects"]
    assert turned["rotation"] == 90 and (turned["x_mm"], turned["y_mm"]) == (15.0, 5.0)
    assert upside_down["rotation"] == 180 and (upside_down["x_mm"], upside_down["y_mm"]) == (
        30.0,
        25.0,
    )
    assert "rotation" not in skewed
    assert any(
        "transform" in n.message and n.element == "Objects/Object-box[3]" for n in conversion.report
    )


def test_embedded_images_and_unsupported_things_are_reported():
    png = io.BytesIO()
    Image.new("L", (20, 10), 0).save(png, "PNG")
    content = base64.b64encode(png.getvalue()).decode()
    data = f'<File name="logo.png" mimetype="image/png" encoding="base64">{content}</File>'
    objects = """
      <Object-image x="2mm" y="2mm" w="10mm" h="5mm" src="logo.png"/>
      <Object-image x="2mm" y="10mm" w="10mm" h="5mm" src="missing.png"/>
      <Object-barcode x="2mm" y="20mm" w="30mm" h="10mm" style="POSTNET" data="12345"/>
      <Object-line x="2mm" y="35mm" dx="10mm" dy="3mm" line_width="0.3mm"/>
      <Object-path x="1mm" y="1mm"/>"""
    conversion = _convert(_document(objects, data=data))
    objects_out = conversion.labels[0].document["objects"]
    assert [o["type"] for o in objects_out] == ["image", "image"]  # the logo, the diagonal
    image = _render(conversion.labels[0].document)
    assert image.getpixel((_dots(7, 300), _dots(4, 300))) == 0  # the black logo
    # The diagonal runs from (2, 35) mm to (12, 38) mm: dots at both ends and its middle.
    for x_mm, y_mm in ((2.2, 35.1), (7, 36.5), (11.8, 37.9)):
        around = image.crop(
            (_dots(x_mm, 300) - 3, _dots(y_mm, 300) - 3, _dots(x_mm, 300) + 4, _dots(y_mm, 300) + 4)
        )
        assert 0 in around.get_flattened_data(), (x_mm, y_mm)
    assert image.getpixel((_dots(2.2, 300), _dots(37.9, 300))) == 255  # not the other slant
    messages = {n.element: n.message for n in conversion.report}
    assert "not embedded" in messages["Objects/Object-image[2]"]
    assert "POSTNET" in messages["Objects/Object-barcode[3]"]
    assert "Objects/Object-line[4]" not in messages
    assert "Object-path" in messages["Objects/Object-path[5]"]


def test_gzip_is_read_like_plain_xml():
    plain = _document('<Object-box x="1mm" y="1mm" w="5mm" h="5mm" line_width="0.5mm"/>')
    assert _convert(gzip.compress(plain)).labels[0].document == _convert(plain).labels[0].document


def test_white_fills_clear_and_version_3_sizes_valign_and_pixdata():
    import struct

    pixels = bytes([0, 0, 0]) * 8 * 4  # an 8 × 4 black RGB image, raw GdkPixdata
    header = struct.pack(">4sIIIII", b"GdkP", 24 + len(pixels), 0x01010001, 24, 8, 4)
    pixdata = base64.b64encode(header + pixels).decode()
    document = f"""<?xml version="1.0"?>
<Glabels-document xmlns="http://glabels.org/xmlns/3.0/">
  <Template brand="X" part="1" size="Other" width="50mm" height="30mm">
    <Label-rectangle id="0" width="50mm" height="30mm"/>
  </Template>
  <Objects id="0" rotate="False">
    <Object-box x="2mm" y="2mm" w="40mm" h="20mm" line_width="0mm" fill_color="0x000000ff"/>
    <Object-box x="5mm" y="5mm" w="10mm" h="10mm" line_width="0.5mm" line_color="0x000000ff"
      fill_color="0xffffffff"/>
    <Object-text x="20mm" y="2mm" w="20mm" h="20mm" valign="Bottom">
      <Span font_family="Sans" font_size="12" color="0xffffffff">v3</Span>
    </Object-text>
    <Object-image x="30mm" y="24mm" w="8mm" h="4mm" src="dot.png"/>
  </Objects>
  <Data><Pixdata name="dot.png">{pixdata}</Pixdata></Data>
</Glabels-document>""".encode()
    conversion = _convert(document)
    objects = conversion.labels[0].document["objects"]
    assert [(o["type"], o.get("ink")) for o in objects] == [
        ("box", None),
        ("box", "white"),  # the white fill clears the black box under it ...
        ("box", None),  # ... and its black frame is drawn on top
        ("text", "white"),  # white letters on the black box
        ("image", None),
    ]
    text = objects[3]
    assert text["size_pt"] == pytest.approx(12.0)  # gLabels 3 prints 12 pt at 12 pt (its picture)
    assert text["valign"] == "bottom"
    image = _render(conversion.labels[0].document)
    assert image.getpixel((_dots(10, 300), _dots(10, 300))) == 255  # cleared by the white fill
    assert image.getpixel((_dots(5.1, 300), _dots(10, 300))) == 0  # its frame
    assert image.getpixel((_dots(34, 300), _dots(26, 300))) == 0  # the embedded Pixdata image


def test_a_turned_barcode_turns_about_its_origin_and_code39_keeps_its_check_character():
    # gLabels turns an object's w × h box about its origin: at 270° the 35 mm wide code runs
    # upward from y = 48 mm, from 13 to 48 mm; gLabels prints Code 39's modulo-43 character.
    objects = (
        '<Object-barcode x="50mm" y="48mm" w="35mm" h="12mm" style="code39" text="false" '
        'checksum="true" data="ROT270" a0="0" a1="-1" a2="1" a3="0" a4="0" a5="0"/>'
    )
    conversion = _convert(_document(objects, width="100mm", height="70mm"), dpi=203)
    [barcode] = conversion.labels[0].document["objects"]
    assert barcode["content"] == "ROT2703"
    assert barcode["rotation"] == 270
    assert barcode["y_mm"] == pytest.approx(13.0)
    image = _render(conversion.labels[0].document)
    assert [r.text for r in zxingcpp.read_barcodes(image.convert("L"))] == ["ROT2703"]
