"""The first label workflow of spec part 4.4 through /mcp, as an agent does it, up to the person who
approves; and the preview as image content."""

from __future__ import annotations

import base64
import io
import json

import mcp_types as types
import pytest
from jsonschema import Draft202012Validator
from PIL import Image

from integration.mcp.client import answer, connect, problem, status
from support.client import Api, unique

pytestmark = pytest.mark.anyio

STAMP = {
    "id": "agent-note",
    "type": "text",
    "x_mm": 2,
    "y_mm": 2,
    "content": "Geprüft von einem Agenten",
    "size_pt": 6,
}


def _image(result: types.CallToolResult) -> tuple[Image.Image, dict]:
    assert not result.is_error, result.content
    block = result.content[0]
    assert isinstance(block, types.ImageContent), block
    assert block.mime_type == "image/png"
    return Image.open(io.BytesIO(base64.b64decode(block.data))), status(result)


def _dots(size_mm: float, dpi: int) -> int:
    return round(size_mm / 25.4 * dpi)


async def test_first_label_workflow(mcp_url: str, admin: Api) -> None:
    agent = admin.service_token("designer")
    agent_approver = admin.service_token("approver")["token"]
    _, person = admin.user_session(["approver"])

    async with connect(mcp_url, agent["token"]) as client:
        # 1. A real Vorlage.
        vorlagen = answer(await client.call_tool("listLabelVorlagen", {"limit": 50}))["items"]
        vorlage = next(v for v in vorlagen if v["variables"])
        # 2. A label from it; keep its id.
        created = await client.call_tool(
            "createLabelFromVorlage", {"body": {"vorlageId": vorlage["id"], "name": unique("mcp")}}
        )
        assert status(created)["status"] == 201
        label = answer(created)
        assert label["vorlage_id"] == vorlage["id"] and label["status"] == "draft"
        # 3. The document and its schema; a revision that keeps every id.
        read = answer(await client.call_tool("getLabelDocument", {"labelId": label["id"]}))
        schema = json.loads((await client.read_resource("svc://schema/label")).contents[0].text)
        assert not list(Draft202012Validator(schema).iter_errors(read["document"]))
        ids = [item["id"] for item in read["document"]["objects"]]
        saved = answer(
            await client.call_tool(
                "patchLabelDocument",
                {
                    "labelId": label["id"],
                    "body": {
                        "operations": [{"op": "add", "path": "/objects/-", "value": STAMP}],
                        "base_version": read["version"],
                        "comment": "stamp",
                    },
                },
            )
        )
        assert (saved["version"], saved["status"]) == (read["version"] + 1, "draft")
        assert [item["id"] for item in saved["document"]["objects"]] == [*ids, STAMP["id"]]
        # 4. The preview with values for the declared variables.
        values = {
            v["name"]: v["sample"]
            for v in vorlage["variables"]
            if not v["computed"] and v["sample"] is not None
        }
        image, summary = _image(
            await client.call_tool(
                "postLabelPreview", {"labelId": label["id"], "body": {"variables": values}}
            )
        )
        size, dpi = saved["document"]["size"], saved["document"]["dpi"]
        width, height = _dots(size["width_mm"], dpi), _dots(size["height_mm"], dpi)
        assert image.size == (width, height) and image.mode == "1"
        assert summary["headers"]["X-Label-Dots"] == f"{width}x{height}"
        assert summary["headers"]["X-Label-Dpi"] == str(dpi)

    # 5. An agent may not approve what an agent wrote; a person may.
    async with connect(mcp_url, agent_approver) as client:
        refused = await client.call_tool(
            "postLabelStatus",
            {"labelId": label["id"], "body": {"version": saved["version"], "status": "approved"}},
        )
        assert problem(refused, "policy.human_required")["params"]["policy"] == "aiFreigabePflicht"
        assert status(refused)["status"] == 403
    approved = person.post(
        f"/labels/{label['id']}/status",
        json={"version": saved["version"], "status": "approved", "comment": "looks right"},
    )
    assert approved.status_code == 200, approved.text
    async with connect(mcp_url, agent["token"]) as client:
        released = answer(await client.call_tool("getLabel", {"labelId": label["id"]}))
    assert (released["status"], released["released_version"]) == ("released", saved["version"])

    audit = admin.get("/audit-log", params={"target": label["id"], "limit": 50}).json()["items"]
    by_operation = {(e["operation_id"], e["outcome"]): e for e in audit}
    for operation in ("createLabelFromVorlage", "patchLabelDocument"):
        entry = by_operation[(operation, "success")]
        assert (entry["actor"], entry["subject"]) == ("service", agent["subject"])
    refusal = by_operation[("postLabelStatus", "refused")]
    assert (refusal["actor"], refusal["code"]) == ("service", "policy.human_required")
    assert by_operation[("postLabelStatus", "success")]["actor"] == "human"


async def test_preview_is_image_content_at_the_label_density(mcp_url: str, admin: Api) -> None:
    token = admin.service_token("designer")["token"]
    async with connect(mcp_url, token) as client:
        label = answer(
            await client.call_tool(
                "createLabelFromDimensions",
                {"body": {"name": unique("mcp"), "width_mm": 60, "height_mm": 40, "dpi": 300}},
            )
        )
        answer(
            await client.call_tool(
                "patchLabelDocument",
                {
                    "labelId": label["id"],
                    "body": {
                        "operations": [
                            {
                                "op": "add",
                                "path": "/variables/-",
                                "value": {"name": "name", "type": "string", "sample": "Muster"},
                            },
                            {
                                "op": "add",
                                "path": "/objects/-",
                                "value": {
                                    "id": "n",
                                    "type": "text",
                                    "x_mm": 2,
                                    "y_mm": 2,
                                    "expression": "upper(name)",
                                },
                            },
                        ]
                    },
                },
            )
        )
        image, summary = _image(
            await client.call_tool(
                "postLabelPreview",
                {
                    "labelId": label["id"],
                    "stufe": "etikett",
                    "body": {"variables": {"name": "Grüße"}},
                },
            )
        )
        width, height = _dots(60, 300), _dots(40, 300)
        assert image.size == (width, height) and image.mode == "1"
        assert image.getextrema() == (0, 255)  # something black was drawn
        assert summary == {
            "status": 200,
            "content_type": "image/png",
            "headers": {
                "X-Label-Dots": f"{width}x{height}",
                "X-Label-Dpi": "300",
                "X-Label-Version": "2",
                "X-Label-Findings": "0",
            },
        }
        sample, _ = _image(
            await client.call_tool("postLabelPreview", {"labelId": label["id"], "version": 2})
        )
        assert sample.tobytes() != image.tobytes()  # the sample value renders differently
        wrong = await client.call_tool(
            "postLabelPreview", {"labelId": label["id"], "body": {"variables": {"nope": 1}}}
        )
        problem(wrong, "label.variables_invalid")
