"""Labels: catalogs, creation, documents and patches, versions and release, forms, copies."""

from __future__ import annotations

import io
from typing import Any

import pytest

from support.client import Api, problem, unique

TEXT = {"id": "title", "type": "text", "x_mm": 5, "y_mm": 5, "content": "Hallo Welt", "size_pt": 12}


@pytest.fixture(scope="module")
def designer(admin: Api) -> Api:
    return admin.user_session(["designer"])[1]


@pytest.fixture(scope="module")
def approver(admin: Api) -> Api:
    return admin.user_session(["approver"])[1]


@pytest.fixture(scope="module")
def agent(admin: Api) -> Api:
    """A designer agent: a service actor."""
    return admin.as_token(admin.service_token("designer")["token"])


def _create(api: Api, **body: Any) -> dict[str, Any]:
    response = api.post(
        "/labels/from-dimensions",
        json={"name": unique("label"), "width_mm": 60, "height_mm": 40, **body},
    )
    assert response.status_code == 201, response.text
    return response.json()


def _patch(api: Api, label_id: str, operations: list[dict], **extra: Any):
    return api.request(
        "PATCH", f"/labels/{label_id}/document", json={"operations": operations, **extra}
    )


def test_catalogs_list_real_vorlagen_and_presets(designer: Api) -> None:
    vorlagen = designer.get("/label-vorlagen", params={"limit": 200}).json()["items"]
    assert len(vorlagen) >= 8
    ids = {v["id"] for v in vorlagen}
    assert len(ids) == len(vorlagen)
    assert all(v["variables"] and v["width_mm"] > 0 for v in vorlagen)
    presets, cursor = [], None
    while True:
        page = designer.get(
            "/media-presets", params={"limit": 7, **({"cursor": cursor} if cursor else {})}
        ).json()
        presets.extend(page["items"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    assert len(presets) >= 20 and len({p["id"] for p in presets}) == len(presets)
    assert {"Zebra", "Brother", "Dymo"} <= {p["brand"] for p in presets}


def test_create_in_every_way(designer: Api) -> None:
    blank = designer.post("/labels", json={"name": "Blank"})
    assert blank.status_code == 201
    label = blank.json()
    assert label["id"].startswith("lbl_")
    assert label["size"] == {"width_mm": 101.6, "height_mm": 152.4, "dpi": 203}
    assert (label["status"], label["latest_version"], label["released_version"]) == (
        "draft",
        1,
        None,
    )
    assert label["archived"] is False

    preset = designer.get("/media-presets").json()["items"][0]
    from_preset = designer.post(
        "/labels/from-preset", json={"preset_id": preset["id"], "name": "P"}
    ).json()
    assert from_preset["size"] == {
        "width_mm": preset["width_mm"],
        "height_mm": preset["height_mm"],
        "dpi": preset["dpi"],
    }

    vorlage = designer.get("/label-vorlagen").json()["items"][0]
    from_vorlage = designer.post(
        "/labels/from-vorlage", json={"vorlageId": vorlage["id"], "name": "V"}
    ).json()
    assert from_vorlage["vorlage_id"] == vorlage["id"]
    document = designer.get(f"/labels/{from_vorlage['id']}/document").json()
    assert document["version"] == 1 and document["status"] == "draft"
    assert {v["name"] for v in document["document"]["variables"]} == {
        v["name"] for v in vorlage["variables"]
    }

    problem(
        designer.post("/labels/from-vorlage", json={"vorlageId": "nope", "name": "x"}),
        404,
        "vorlage.not_found",
    )
    problem(
        designer.post("/labels/from-preset", json={"preset_id": "nope", "name": "x"}),
        404,
        "preset.not_found",
    )
    body = problem(
        designer.post(
            "/labels/from-dimensions",
            json={"name": "x", "width_mm": -1, "height_mm": 10, "dpi": 250},
        ),
        422,
        "request.invalid",
    )
    assert {f["field"] for f in body["params"]["fields"]} == {"body.width_mm", "body.dpi"}


def test_patches_make_versions_and_keep_ids(designer: Api) -> None:
    label = _create(designer)
    response = _patch(
        designer,
        label["id"],
        [{"op": "add", "path": "/objects/-", "value": TEXT}],
        base_version=1,
        comment="title",
    )
    assert response.status_code == 200, response.text
    saved = response.json()
    assert saved["version"] == 2 and saved["status"] == "draft"
    assert saved["document"]["objects"][0]["content"] == "Hallo Welt"

    problem(
        _patch(
            designer,
            label["id"],
            [{"op": "replace", "path": "/objects/0/content", "value": "x"}],
            base_version=1,
        ),
        409,
        "document.version_conflict",
    )
    problem(
        _patch(
            designer, label["id"], [{"op": "replace", "path": "/objects/0/id", "value": "renamed"}]
        ),
        422,
        "document.id_changed",
    )
    problem(
        _patch(
            designer,
            label["id"],
            [{"op": "replace", "path": "/objects", "value": [{**TEXT, "id": "other"}]}],
        ),
        422,
        "document.id_changed",
    )
    body = problem(
        _patch(designer, label["id"], [{"op": "add", "path": "/objects/0/colour", "value": "red"}]),
        422,
        "document.invalid",
    )
    assert [e["path"] for e in body["params"]["errors"]] == ["/objects/0/colour"]
    body = problem(
        _patch(
            designer,
            label["id"],
            [
                {
                    "op": "add",
                    "path": "/objects/-",
                    "value": {
                        **TEXT,
                        "id": "computed",
                        "content": None,
                        "expression": "upper(name +",
                    },
                }
            ],
        ),
        422,
        "document.invalid",
    )
    error = body["params"]["errors"][0]
    assert error["path"] == "/objects/1/expression" and error["type"] == "cel.invalid"
    problem(
        _patch(designer, label["id"], [{"op": "remove", "path": "/nothing"}]),
        422,
        "document.patch_failed",
    )
    # A copy that doubles the document is stopped at the operation that crosses the limit.
    doubling = [{"op": "add", "path": "/grow", "value": ["x" * 60_000]}]
    doubling += [{"op": "copy", "from": "/grow", "path": "/grow/-"}] * 40
    too_large = problem(_patch(designer, label["id"], doubling), 413, "document.too_large")
    assert too_large["params"]["index"] == 8
    # Nothing of the refused patches was saved.
    assert designer.get(f"/labels/{label['id']}").json()["latest_version"] == 2

    removed = _patch(designer, label["id"], [{"op": "remove", "path": "/objects/0"}])
    assert removed.status_code == 200 and removed.json()["document"]["objects"] == []
    assert (
        designer.get(f"/labels/{label['id']}/document", params={"version": 2}).json()["document"][
            "objects"
        ][0]["id"]
        == "title"
    )


def test_version_history_records_authors(designer: Api, agent: Api) -> None:
    label = _create(designer)
    _patch(agent, label["id"], [{"op": "add", "path": "/objects/-", "value": TEXT}])
    history = designer.get(f"/labels/{label['id']}/versions").json()["items"]
    assert [v["version"] for v in history] == [2, 1]
    assert history[0]["author"]["actor"] == "service"
    assert history[1]["author"]["actor"] == "human"
    one = designer.get(f"/labels/{label['id']}/versions/2").json()
    assert one["version"] == 2 and one["document"]["objects"][0]["id"] == "title"
    problem(designer.get(f"/labels/{label['id']}/versions/9"), 404, "label.version_not_found")
    problem(designer.get("/labels/lbl_nope/versions"), 404, "label.not_found")


def test_agent_versions_need_a_human_approver(
    admin: Api, designer: Api, agent: Api, approver: Api
) -> None:
    label = _create(agent)
    agent_approver = admin.as_token(admin.service_token("approver")["token"])
    body = problem(
        agent_approver.post(
            f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"}
        ),
        403,
        "policy.human_required",
    )
    assert body["params"]["policy"] == "aiFreigabePflicht"
    problem(
        designer.post(f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"}),
        403,
        "auth.forbidden",
    )
    approved = approver.post(
        f"/labels/{label['id']}/status",
        json={"version": 1, "status": "approved", "comment": "checked against the drawing"},
    )
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    # The approval's comment is kept on the version: in the answer, the history and the version.
    assert approved.json()["status_comment"] == "checked against the drawing"
    listed = designer.get(f"/labels/{label['id']}/versions").json()["items"]
    assert [v["status_comment"] for v in listed] == ["checked against the drawing"]
    one = designer.get(f"/labels/{label['id']}/versions/1").json()
    assert one["status_comment"] == "checked against the drawing"
    assert one["status_changed_by"] and one["comment"] != one["status_comment"]
    meta = designer.get(f"/labels/{label['id']}").json()
    assert meta["status"] == "released" and meta["released_version"] == 1

    # A person's version may be approved by any approver, an agent included.
    _patch(designer, label["id"], [{"op": "add", "path": "/objects/-", "value": TEXT}])
    second = agent_approver.post(
        f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"}
    )
    assert second.status_code == 200
    history = {
        v["version"]: v["status"]
        for v in designer.get(f"/labels/{label['id']}/versions").json()["items"]
    }
    assert history == {2: "approved", 1: "retired"}
    # Retired by the next approval, without a word of its own: the old comment does not linger.
    assert designer.get(f"/labels/{label['id']}/versions/1").json()["status_comment"] is None
    assert designer.get(f"/labels/{label['id']}").json()["released_version"] == 2

    retired = approver.post(
        f"/labels/{label['id']}/status", json={"version": 2, "status": "retired"}
    )
    assert retired.status_code == 200
    meta = designer.get(f"/labels/{label['id']}").json()
    assert meta["released_version"] is None and meta["status"] == "draft"
    entries = admin.get(
        "/audit-log", params={"target": label["id"], "operation": "postLabelStatus"}
    ).json()["items"]
    done = [e for e in entries if e["outcome"] == "success"]
    assert [(e["details"]["version"], e["details"]["after"]) for e in done] == [
        (2, "retired"),
        (2, "approved"),
        (1, "approved"),
    ]
    refused = {e["code"] for e in entries if e["outcome"] == "refused"}
    assert refused == {"policy.human_required", "auth.forbidden"}


def test_only_a_human_admin_changes_the_policy(admin: Api, designer: Api, agent: Api) -> None:
    policies = designer.get("/policies").json()["items"]
    assert [(p["name"], p["enabled"]) for p in policies] == [
        ("aiFreigabePflicht", True),
        ("deploymentChangesNeedApproval", False),
    ]
    admin_token = admin.as_token(admin.service_token("admin")["token"])
    problem(
        admin_token.request("PUT", "/policies/aiFreigabePflicht", json={"enabled": False}),
        403,
        "auth.human_required",
    )
    problem(
        designer.request("PUT", "/policies/aiFreigabePflicht", json={"enabled": False}),
        403,
        "auth.forbidden",
    )
    problem(
        admin.request("PUT", "/policies/noSuchPolicy", json={"enabled": False}),
        404,
        "policy.not_found",
    )
    label = _create(agent)
    agent_approver = admin.as_token(admin.service_token("approver")["token"])
    try:
        changed = admin.request("PUT", "/policies/aiFreigabePflicht", json={"enabled": False})
        assert changed.status_code == 200 and changed.json()["enabled"] is False
        assert (
            agent_approver.post(
                f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"}
            ).status_code
            == 200
        )
    finally:
        admin.request("PUT", "/policies/aiFreigabePflicht", json={"enabled": True})
    assert designer.get("/policies").json()["items"][0]["enabled"] is True
    audit = admin.get("/audit-log", params={"operation": "putPolicy"}).json()["items"]
    assert [e["details"]["after"] for e in audit[:2]] == [True, False]


def test_forms_are_derived_then_authored(designer: Api) -> None:
    label = _create(designer)
    _patch(
        designer,
        label["id"],
        [
            {
                "op": "add",
                "path": "/variables/-",
                "value": {"name": "batch", "type": "string", "required": True, "sample": "B1"},
            },
            {"op": "add", "path": "/variables/-", "value": {"name": "qty", "type": "integer"}},
            {
                "op": "add",
                "path": "/variables/-",
                "value": {"name": "code", "type": "string", "expression": "upper(batch)"},
            },
        ],
    )
    derived = designer.get(f"/labels/{label['id']}/form").json()
    assert derived["version"] == 0 and derived["status"] == "derived"
    fields = derived["document"]["fields"]
    assert [(f["variable"], f["kind"], f["required"]) for f in fields] == [
        ("batch", "text", True),
        ("qty", "integer", False),
    ]
    patched = designer.request(
        "PATCH",
        f"/labels/{label['id']}/form",
        json={
            "base_version": 0,
            "operations": [
                {"op": "replace", "path": "/fields/1/label", "value": "Quantity"},
                {"op": "add", "path": "/fields/1/validation", "value": "value > 0"},
            ],
        },
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["version"] == 1 and patched.json()["status"] == "draft"
    assert (
        designer.get(f"/labels/{label['id']}/form").json()["document"]["fields"][1]["label"]
        == "Quantity"
    )
    problem(
        designer.request(
            "PATCH",
            f"/labels/{label['id']}/form",
            json={"operations": [{"op": "replace", "path": "/fields/0/id", "value": "x"}]},
        ),
        422,
        "document.id_changed",
    )
    body = problem(
        designer.request(
            "PATCH",
            f"/labels/{label['id']}/form",
            json={"operations": [{"op": "replace", "path": "/fields/0/variable", "value": "code"}]},
        ),
        422,
        "document.invalid",
    )
    assert body["params"]["errors"][0]["path"] == "/fields/0/variable"
    problem(
        designer.request(
            "PATCH", f"/labels/{label['id']}/form", json={"base_version": 0, "operations": []}
        ),
        409,
        "document.version_conflict",
    )


def test_rename_archive_copy_and_delete(designer: Api, admin: Api) -> None:
    label = _create(designer, name="Original")
    _patch(designer, label["id"], [{"op": "add", "path": "/objects/-", "value": TEXT}])
    renamed = designer.request("PATCH", f"/labels/{label['id']}", json={"name": "Renamed"})
    assert renamed.json()["name"] == "Renamed"

    info = designer.get(f"/labels/{label['id']}/copy-info").json()
    assert info["suggested_name"] == "Renamed (copy)" and info["latest_version"] == 2
    assert [v["version"] for v in info["versions"]] == [2, 1]

    duplicate = designer.post(f"/labels/{label['id']}/duplicate").json()
    assert duplicate["name"] == "Renamed (copy)" and duplicate["copied_from"] == f"{label['id']}@2"
    assert designer.get(f"/labels/{duplicate['id']}/document").json()["document"]["objects"]
    older = designer.post(
        f"/labels/{label['id']}/save-copy", json={"name": "First", "version": 1}
    ).json()
    assert older["copied_from"] == f"{label['id']}@1"
    assert designer.get(f"/labels/{older['id']}/document").json()["document"]["objects"] == []

    archived = designer.post(f"/labels/{label['id']}/archive").json()
    assert archived["archived"] is True
    listed = designer.get("/labels", params={"archived": "true", "limit": 200}).json()["items"]
    assert label["id"] in {item["id"] for item in listed}
    active = designer.get("/labels", params={"archived": "false", "limit": 200}).json()["items"]
    assert label["id"] not in {item["id"] for item in active}
    assert (
        designer.post(f"/labels/{label['id']}/archive", json={"archived": False}).json()["archived"]
        is False
    )

    assert designer.delete(f"/labels/{label['id']}").status_code == 204
    problem(designer.get(f"/labels/{label['id']}"), 404, "label.not_found")
    problem(designer.get(f"/labels/{label['id']}/versions/1"), 404, "label.not_found")
    operations = [
        e["operation_id"]
        for e in admin.get("/audit-log", params={"target": label["id"], "limit": 50}).json()[
            "items"
        ]
    ]
    assert operations[:2] == ["deleteLabel", "postLabelArchive"]
    assert "createLabelFromDimensions" in operations and "patchLabel" in operations


def test_labels_list_by_name_with_pagination(designer: Api) -> None:
    prefix = unique("zz-list")
    # a name and the same name with a suffix: the shorter sorts first
    names_made = [f"{prefix} (2)", f"{prefix}", *(f"{prefix}-{i}" for i in range(3))]
    made = [_create(designer, name=name)["id"] for name in names_made]
    seen, cursor = [], None
    while True:
        page = designer.get(
            "/labels", params={"limit": 2, **({"cursor": cursor} if cursor else {})}
        ).json()
        seen.extend(page["items"])
        cursor = page["next_cursor"]
        if not cursor:
            break
    ids = [item["id"] for item in seen]
    assert set(made) <= set(ids) and len(ids) == len(set(ids))
    names = [item["name"].casefold() for item in seen]
    assert names == sorted(names)


def test_roles_for_labels(admin: Api) -> None:
    _, operator = admin.user_session(["operator"])
    assert operator.get("/labels").status_code == 200
    problem(operator.post("/labels", json={"name": "x"}), 403, "auth.forbidden")


def test_preview_is_the_print_raster(designer: Api) -> None:
    from PIL import Image

    label = _create(designer, dpi=300)
    _patch(
        designer,
        label["id"],
        [
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
        ],
    )
    response = designer.post(
        f"/labels/{label['id']}/preview",
        params={"stufe": "etikett"},
        json={"variables": {"name": "Grüße"}},
    )
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "image/png"
    width, height = round(60 / 25.4 * 300), round(40 / 25.4 * 300)
    assert response.headers["x-label-dots"] == f"{width}x{height}"
    assert response.headers["x-label-dpi"] == "300"
    image = Image.open(io.BytesIO(response.content))
    assert image.size == (width, height) and image.mode == "1"
    assert image.getextrema() == (0, 255)  # something black was drawn
    sample = designer.post(f"/labels/{label['id']}/preview").content
    assert sample != response.content  # the sample value renders differently
    problem(
        designer.post(f"/labels/{label['id']}/preview", params={"stufe": "andere"}),
        422,
        "request.invalid",
    )
    problem(
        designer.post(f"/labels/{label['id']}/preview", json={"variables": {"nope": 1}}),
        422,
        "label.variables_invalid",
    )


def test_cel_evaluate(designer: Api) -> None:
    result = designer.post(
        "/cel/evaluate",
        json={
            "expression": 'pad(counters.serial, 6) + "-" + upper(batch)',
            "variables": {"batch": "ab1"},
            "counters": {"serial": 42},
        },
    ).json()
    assert result == {"value": "000042-AB1", "type": "string"}
    typed = designer.post(
        "/cel/evaluate",
        json={"expression": "qty * 2", "variables": {"qty": "21"}, "types": {"qty": "integer"}},
    ).json()
    assert typed == {"value": 42, "type": "int"}
    body = problem(
        designer.post("/cel/evaluate", json={"expression": "1 +\n  * 2"}), 422, "cel.invalid"
    )
    assert body["params"]["line"] == 2 and body["params"]["column"] is not None


def test_cel_evaluate_stops_a_runaway_expression(admin: Api) -> None:
    """Any role may evaluate: the most an operator's token can make it do is bounded."""
    _, operator = admin.user_session(["operator"])
    hundred = "[" + ", ".join(str(i) for i in range(100)) + "]"
    runaway = f"{hundred}.map(a, {hundred}.map(b, {hundred}.map(c, s + s)))"
    response = operator.post(
        "/cel/evaluate", json={"expression": runaway, "variables": {"s": "x" * 1000}}
    )
    body = problem(response, 422, "cel.limit_exceeded")
    assert body["params"]["limit"] in ("work", "size", "time")
    deep = "[1].map(a, [1].map(b, [1].map(c, [1].map(d, a + b + c + d))))"
    body = problem(
        operator.post("/cel/evaluate", json={"expression": deep}), 422, "cel.limit_exceeded"
    )
    assert body["params"]["limit"] == "depth"
    ordinary = {"expression": "size(s + s)", "variables": {"s": "ab"}}
    assert operator.post("/cel/evaluate", json=ordinary).json() == {"value": 4, "type": "int"}
