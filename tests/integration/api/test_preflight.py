"""Preflight through the API: findings with the document and patches, the count on previews,
and a version with error findings that cannot be approved until it is fixed."""

from __future__ import annotations

from typing import Any

import pytest

from support.client import Api, problem, unique

SSCC = {
    "id": "sscc",
    "type": "barcode",
    "symbology": "gs1-128",
    "x_mm": 30,
    "y_mm": 5,
    "height_mm": 15,
    "module_width_dots": 4,
    "content": "(00)340123451234567895",
}


@pytest.fixture(scope="module")
def designer(admin: Api) -> Api:
    return admin.user_session(["designer"])[1]


@pytest.fixture(scope="module")
def approver(admin: Api) -> Api:
    return admin.user_session(["approver"])[1]


def _label(designer: Api) -> dict[str, Any]:
    response = designer.post(
        "/labels/from-dimensions",
        json={"name": unique("preflight"), "width_mm": 101.6, "height_mm": 50.8},
    )
    assert response.status_code == 201, response.text
    return response.json()


def _patch(designer: Api, label_id: str, operations: list[dict[str, Any]]) -> dict[str, Any]:
    response = designer.request(
        "PATCH", f"/labels/{label_id}/document", json={"operations": operations}
    )
    assert response.status_code == 200, response.text
    return response.json()


def test_a_clipped_gs1_128_is_found_blocks_approval_and_a_fix_releases(
    designer: Api, approver: Api
) -> None:
    label = _label(designer)
    patched = _patch(designer, label["id"], [{"op": "add", "path": "/objects/-", "value": SSCC}])
    codes = {(f["code"], f["severity"], f["object_id"], f["path"]) for f in patched["findings"]}
    assert ("label.barcode_clipped", "error", "sscc", "/objects/0") in codes
    clipped = next(f for f in patched["findings"] if f["code"] == "label.barcode_clipped")
    assert clipped["params"]["edges"]["right"] > 0 and "right edge" in clipped["message"]

    read = designer.get(f"/labels/{label['id']}/document").json()
    assert read["findings"] == patched["findings"]
    preview = designer.post(f"/labels/{label['id']}/preview", json={})
    assert preview.status_code == 200
    assert int(preview.headers["x-label-findings"]) >= 1

    refused = approver.post(
        f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"}
    )
    body = problem(refused, 422, "label.has_errors")
    assert body["params"]["version"] == 2
    assert {f["code"] for f in body["params"]["findings"]} >= {"label.barcode_clipped"}
    assert designer.get(f"/labels/{label['id']}").json()["released_version"] is None

    fixed = _patch(
        designer, label["id"], [{"op": "replace", "path": "/objects/0/x_mm", "value": 8}]
    )
    assert [f for f in fixed["findings"] if f["severity"] == "error"] == []
    clean = designer.post(f"/labels/{label['id']}/preview", json={})
    assert clean.headers["x-label-findings"] == "0"
    approved = approver.post(
        f"/labels/{label['id']}/status", json={"version": 3, "status": "approved"}
    )
    assert approved.status_code == 200, approved.text


def test_findings_name_unused_variables_and_overflowing_text(designer: Api) -> None:
    label = _label(designer)
    patched = _patch(
        designer,
        label["id"],
        [
            {
                "op": "add",
                "path": "/variables/-",
                "value": {"name": "spare", "type": "string", "sample": "x"},
            },
            {
                "op": "add",
                "path": "/objects/-",
                "value": {
                    "id": "title",
                    "type": "text",
                    "x_mm": 2,
                    "y_mm": 2,
                    "width_mm": 10,
                    "content": "A title far wider than its box",
                },
            },
        ],
    )
    found = {(f["code"], f["severity"], f["path"]) for f in patched["findings"]}
    assert ("label.variable_unused", "warning", "/variables/0") in found
    assert ("label.text_overflow", "error", "/objects/0") in found
    old = designer.get(f"/labels/{label['id']}/document", params={"version": 1}).json()
    assert old["findings"] == []  # version 1 was blank
