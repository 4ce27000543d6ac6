"""postLabelLayout, the designer's round trip: an unsaved document in, the print raster, every
object's box in dots from that very layout and its findings out; the same dots as a saved
version's preview; nothing blocks (an object that cannot be drawn is a finding), and the input is
bounded like a saved version."""

from __future__ import annotations

import base64
import io
import os
from typing import Any

import pytest
import zxingcpp
from PIL import Image

from support.client import Api, problem, unique

TEXT = {"id": "title", "type": "text", "x_mm": 3, "y_mm": 2, "content": "Lager 7", "size_pt": 14}
CODE = {
    "id": "code",
    "type": "barcode",
    "symbology": "code128",
    "x_mm": 6,
    "y_mm": 12,
    "height_mm": 8,
    "module_width_dots": 2,
    "expression": "'SKU-' + shown",
}
BOX = {"id": "frame", "type": "box", "x_mm": 30, "y_mm": 1, "width_mm": 20, "height_mm": 6}


def document(*objects: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "size": {"width_mm": 60, "height_mm": 30},
        "dpi": 203,
        "variables": [
            {"name": "sku", "type": "string", "sample": "A-1042"},
            {"name": "shown", "type": "string", "expression": "upper(sku)"},
        ],
        "objects": list(objects),
        **extra,
    }


def raster(layout: dict[str, Any]) -> Image.Image:
    image = Image.open(io.BytesIO(base64.b64decode(layout["png_base64"])))
    image.load()
    return image


def ink_in(image: Image.Image, box: list[int]) -> tuple[int, int, int, int] | None:
    """Where the raster has black dots inside `box` (label dots)."""
    inverted = image.convert("L").point(lambda v: 255 - v)
    found = inverted.crop(tuple(box)).getbbox()
    return (
        None
        if found is None
        else (box[0] + found[0], box[1] + found[1], box[0] + found[2], box[1] + found[3])
    )


@pytest.fixture(scope="module")
def operator(admin: Api) -> Api:
    """Any caller may lay a label out: here someone who only operates printers."""
    return admin.user_session(["operator"])[1]


def layout(api: Api, body: dict[str, Any]) -> dict[str, Any]:
    response = api.post("/labels/layout", json=body)
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_an_unsaved_document_comes_back_as_its_raster_boxes_findings_and_values(
    operator: Api,
) -> None:
    turned = {**TEXT, "id": "side", "x_mm": 50, "y_mm": 4, "rotation": 90, "content": "Seite"}
    answer = layout(operator, {"document": document(BOX, TEXT, CODE, turned)})
    assert (answer["width_dots"], answer["height_dots"], answer["dpi"]) == (480, 240, 203)
    image = raster(answer)
    assert image.size == (480, 240) and image.mode == "1"
    assert answer["findings"] == []
    assert answer["values"] == {"sku": "A-1042", "shown": "A-1042"}

    boxes = {item["id"]: item for item in answer["objects"]}
    assert [item["id"] for item in answer["objects"]] == ["frame", "title", "code", "side"]
    assert all(item["drawn"] for item in answer["objects"])
    # Each box is where the renderer put the object: its anchor at x/y in dots, and the raster
    # has its ink exactly inside it.
    assert boxes["frame"]["box"] == [240, 8, 240 + 160, 8 + 48]
    for item in answer["objects"]:
        left, top = item["box"][:2]
        assert item["ink"][0] >= left and item["ink"][1] >= top
        assert item["ink"][2] <= item["box"][2] and item["ink"][3] <= item["box"][3]
    title = boxes["title"]
    assert ink_in(image, title["box"]) == tuple(title["ink"])
    assert title["text"] == "Lager 7" and boxes["code"]["text"] == "SKU-A-1042"
    # What resizing a barcode needs: the module and the bars' height the renderer used.
    assert (boxes["code"]["module_dots"], boxes["code"]["bar_height_dots"]) == (2, 64)
    assert boxes["title"]["module_dots"] is None
    # A quarter turn: the text's box stands upright, taller than wide.
    side = boxes["side"]["box"]
    assert side[3] - side[1] > side[2] - side[0]
    assert boxes["side"]["box"][:2] == [round(50 / 25.4 * 203), round(4 / 25.4 * 203)]
    decoded = zxingcpp.read_barcodes(image.convert("L"))
    assert [result.text for result in decoded] == ["SKU-A-1042"]


def test_the_same_dots_as_the_saved_versions_preview(admin: Api) -> None:
    designer = admin.user_session(["designer"])[1]
    created = designer.post(
        "/labels/from-dimensions", json={"name": unique("layout"), "width_mm": 60, "height_mm": 30}
    ).json()
    saved = designer.request(
        "PATCH",
        f"/labels/{created['id']}/document",
        json={"operations": [{"op": "replace", "path": "", "value": document(TEXT, CODE, BOX)}]},
    )
    assert saved.status_code == 200, saved.text
    preview = designer.post(f"/labels/{created['id']}/preview", json={})
    assert preview.status_code == 200
    answer = layout(designer, {"document": saved.json()["document"]})
    from_preview = Image.open(io.BytesIO(preview.content)).convert("1")
    assert raster(answer).tobytes() == from_preview.tobytes()


def test_given_variables_are_laid_out_and_refused_when_they_do_not_fit(operator: Api) -> None:
    answer = layout(operator, {"document": document(CODE), "variables": {"sku": "Z-9"}})
    assert answer["objects"][0]["text"] == "SKU-Z-9" and answer["values"]["shown"] == "Z-9"
    counted = {**document(CODE), "variables": [{"name": "sku", "type": "integer", "sample": 1}]}
    refused = operator.post("/labels/layout", json={"document": counted, "variables": {"sku": "x"}})
    assert (
        problem(refused, 422, "label.variables_invalid")["params"]["errors"][0]["variable"] == "sku"
    )


def test_a_barcode_past_the_edge_is_a_finding_at_its_box(operator: Api) -> None:
    late = {**CODE, "x_mm": 45}
    answer = layout(operator, {"document": document(late)})
    (clipped,) = [f for f in answer["findings"] if f["code"] == "label.barcode_clipped"]
    assert clipped["object_id"] == "code" and clipped["severity"] == "error"
    box = answer["objects"][0]["box"]
    assert box[2] > answer["width_dots"]
    assert box[2] - answer["width_dots"] == clipped["params"]["edges"]["right"]


def test_nothing_blocks_an_object_that_cannot_be_drawn_is_a_finding(operator: Api) -> None:
    broken = {**CODE, "id": "ean", "symbology": "ean13", "expression": None, "content": "12"}
    del broken["expression"]
    bad_cel = {**TEXT, "id": "oops", "y_mm": 20, "content": None, "expression": "sku +"}
    del bad_cel["content"]
    answer = layout(operator, {"document": document(TEXT, broken, bad_cel)})
    drawn = {item["id"]: item["drawn"] for item in answer["objects"]}
    assert drawn == {"title": True, "ean": False, "oops": False}
    codes = {(f["code"], f["object_id"]) for f in answer["findings"]}
    assert {("label.barcode_invalid", "ean"), ("label.cel_invalid", "oops")} <= codes
    # An object not drawn still has a box to select it by: its anchor, declared or 5 mm.
    ean = answer["objects"][1]["box"]
    assert ean[:2] == [round(6 / 25.4 * 203), round(12 / 25.4 * 203)] and ean[2] > ean[0]
    assert ink_in(raster(answer), [0, 0, 480, 240]) == tuple(answer["objects"][0]["ink"])


def test_the_document_is_bounded_like_a_saved_version(operator: Api, anonymous: Api) -> None:
    invalid = document({**TEXT, "x_mm": "far"})
    body = problem(
        operator.post("/labels/layout", json={"document": invalid}), 422, "document.invalid"
    )
    assert body["params"]["errors"][0]["path"] == "/objects/0/x_mm"
    unknown = problem(
        operator.post("/labels/layout", json={"document": document(), "extra": 1}),
        422,
        "request.invalid",
    )
    assert unknown["params"]["fields"][0]["field"] == "body.extra"
    # Random bytes do not compress: a version could not store this picture.
    picture = base64.b64encode(os.urandom(420_000)).decode()
    image = {"id": "logo", "type": "image", "x_mm": 0, "y_mm": 0, "width_mm": 5, "height_mm": 5}
    large = document({**image, "content_base64": picture})
    body = problem(
        operator.post("/labels/layout", json={"document": large}), 413, "document.too_large"
    )
    assert body["params"]["limit"] == 350_000
    # Any caller may ask: the work across objects is bounded too, the same way on every machine.
    heavy = [
        {**CODE, "id": f"qr{n}", "symbology": "qr", "content": f"{n:04d}" + "X" * 996}
        for n in range(30)
    ]
    for code in heavy:
        del code["expression"], code["height_mm"]
    body = problem(
        operator.post("/labels/layout", json={"document": document(*heavy)}),
        422,
        "label.too_complex",
    )
    assert body["params"] == {
        "what": "characters of text and barcode data",
        "limit": 20_000,
        "object_id": "qr20",
    }
    huge = {**document(), "size": {"width_mm": 1000, "height_mm": 1000}, "dpi": 600}
    problem(operator.post("/labels/layout", json={"document": huge}), 422, "label.too_large")
    problem(
        anonymous.post("/labels/layout", json={"document": document()}), 401, "auth.unauthenticated"
    )
