"""postImport through the gateway (multipart) and through MCP ({name, contentBase64}): labels are
created as drafts with audit entries, refused files create nothing, the size limit is a 413."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from integration.mcp.client import answer, connect
from integration.mcp.client import problem as mcp_problem
from support.client import Api, problem
from support.server import DevServer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "import"


@pytest.fixture(scope="module")
def designer(admin: Api) -> Api:
    return admin.user_session(["designer"])[1]


def _upload(api: Api, name: str, content: bytes, **params: object):
    return api.post("/import", files={"file": (name, content)}, params=params)


def _label_count(admin: Api) -> int:
    return len(admin.get("/labels", params={"limit": 200}).json()["items"])


def test_a_zpl_file_becomes_draft_labels_with_a_report(designer: Api, admin: Api) -> None:
    response = _upload(designer, "shipping.zpl", (FIXTURES / "shipping.zpl").read_bytes())
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["source"] == {"name": "shipping.zpl", "format": "zpl"}
    [document] = body["documents"]
    assert document["kind"] == "label" and document["version"] == 1
    assert document["name"] == "shipping"
    assert any(
        entry["line"] == 20 and "print quantity" in entry["message"] for entry in body["report"]
    )
    assert all(set(entry) >= {"severity", "message"} for entry in body["report"])

    label = designer.get(f"/labels/{document['label_id']}").json()
    assert label["status"] == "draft" and label["latest_version"] == 1
    read = designer.get(f"/labels/{document['label_id']}/document").json()
    assert read["status"] == "draft"
    assert [f for f in read["findings"] if f["severity"] == "error"] == []
    assert read["document"]["variables"][0]["name"] == "recipient"
    preview = designer.post(f"/labels/{document['label_id']}/preview", json={})
    assert preview.status_code == 200 and preview.headers["x-label-dpi"] == "203"

    entries = admin.get("/audit-log", params={"target": document["label_id"]}).json()["items"]
    assert [e["operation_id"] for e in entries] == ["postImport"]


def test_a_glabels_file_at_a_chosen_density(designer: Api) -> None:
    content = (FIXTURES / "address-v4-compressed.glabels").read_bytes()
    response = _upload(designer, "address.glabels", content, dpi=300)
    assert response.status_code == 201, response.text
    body = response.json()
    assert body["source"]["format"] == "glabels"
    label = designer.get(f"/labels/{body['documents'][0]['label_id']}").json()
    assert label["size"] == {"width_mm": 101.6, "height_mm": 50.8, "dpi": 300}


def test_refused_files_create_nothing(designer: Api, admin: Api) -> None:
    before = _label_count(admin)
    short = b"^XA^PW100^LL100^FO0,0^GB10,10,1^FS^XZ^XA^PW100^LL100^FO0,0^GFA,400,400,10,FF^FS^XZ"
    problem(_upload(designer, "two.zpl", short), 422, "import.graphic_invalid")
    problem(_upload(designer, "x.zpl", b"^XA^PW999999^XZ"), 422, "import.size_invalid")
    entity = b'<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><Glabels-document>&e;</Glabels-document>'
    problem(_upload(designer, "x.glabels", entity), 422, "import.unsafe_xml")
    problem(
        _upload(designer, "big.zpl", b"^XA" + b" " * (2 * 1024 * 1024 + 10)),
        413,
        "import.too_large",
    )
    assert _label_count(admin) == before
    missing = designer.post("/import", data={"other": "x"})
    problem(missing, 422, "request.invalid")


def test_operators_may_not_import(admin: Api) -> None:
    operator = admin.user_session(["operator"])[1]
    problem(_upload(operator, "shipping.zpl", b"^XA^XZ"), 403, "auth.forbidden")


@pytest.mark.anyio
async def test_mcp_takes_the_file_as_name_and_base64(
    dev_server: DevServer, admin: Api, designer: Api
) -> None:
    token = admin.service_token("designer")["token"]
    content = base64.b64encode((FIXTURES / "barcodes.zpl").read_bytes()).decode()
    async with connect(f"{dev_server.url}/mcp", token) as client:
        result = await client.call_tool(
            "postImport", {"body": {"file": {"name": "barcodes.zpl", "contentBase64": content}}}
        )
        body = answer(result)
        assert body["source"] == {"name": "barcodes.zpl", "format": "zpl"}
        refused = await client.call_tool(
            "postImport",
            {
                "body": {
                    "file": {"name": "x.zpl", "contentBase64": base64.b64encode(b"hello").decode()}
                }
            },
        )
        mcp_problem(refused, "import.unreadable")
    [created] = body["documents"]
    versions = designer.get(f"/labels/{created['label_id']}/versions").json()["items"]
    assert versions[0]["author"]["actor"] == "service"  # an agent's import: a person approves


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_the_answer_says_whether_each_label_was_imported_exactly(designer: Api) -> None:
    exact = b"^XA^PW400^LL200^FO10,10^GB100,50,3^FS^FO20,100^A0N,30,30^FDExact^FS^XZ"
    approximated = b"^XA^PW400^LL200^FO10,10^A@N,30,30,E:ARIAL.TTF^FDNamed^FS^XZ"
    both = _upload(designer, "two.zpl", exact + b"\n" + approximated)
    assert both.status_code == 201, both.text
    body = both.json()
    first, second = body["documents"]
    assert (first["fidelity"], first["warnings"]) == ("exact", 0)
    assert second["fidelity"] == "with_warnings" and second["warnings"] == 1
    [warning] = [e for e in body["report"] if e["severity"] == "warning"]
    assert warning["document"] == 1 and "E:ARIAL.TTF" in warning["message"]
