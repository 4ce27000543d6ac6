"""Flows over REST against the dev server: documents and versions like labels, lint with label
references, dry runs that change nothing, and every operation's roles."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer

LABEL = {
    "size": {"width_mm": 60, "height_mm": 30},
    "dpi": 203,
    "variables": [
        {"name": "name", "type": "string", "required": True},
        {"name": "qty", "type": "integer"},
        {"name": "serial", "type": "string", "expression": "string(counters.%s)"},
    ],
    "objects": [
        {"id": "t", "type": "text", "x_mm": 2, "y_mm": 2, "size_pt": 10, "expression": "name"},
        {"id": "s", "type": "text", "x_mm": 2, "y_mm": 12, "size_pt": 10, "expression": "serial"},
    ],
}


def _flow_document(label_ref: str) -> dict[str, Any]:
    return {
        "nodes": [
            {
                "id": "inbox",
                "type": "trigger.folder",
                "path": "/srv/in",
                "format": "csv",
                "wires": ["shape"],
            },
            {
                "id": "shape",
                "type": "logic.set",
                "values": {"qty": "int(record.qty)", "name": "upper(record.name)"},
                "wires": ["some"],
            },
            {
                "id": "some",
                "type": "logic.filter",
                "condition": "record.qty > 0",
                "wires": ["ship"],
            },
            {
                "id": "ship",
                "type": "action.print",
                "label": label_ref,
                "printer": "shipping",
                "copies": "record.qty",
                "variables": {"name": "record.name"},
                "wires": ["note"],
            },
            {"id": "note", "type": "action.log", "message": '"printed " + record.name'},
        ],
        "samples": [{"name": "anna", "qty": "2"}, {"name": "bert", "qty": "0"}],
    }


@pytest.fixture(scope="module")
def designer(admin: Api) -> Api:
    return admin.user_session(["designer"])[1]


@pytest.fixture(scope="module")
def operator(admin: Api) -> Api:
    return admin.user_session(["operator"])[1]


@pytest.fixture(scope="module")
def approver(admin: Api) -> Api:
    return admin.user_session(["approver"])[1]


@pytest.fixture(scope="module")
def agent(admin: Api) -> Api:
    return admin.as_token(admin.service_token("designer")["token"])


@pytest.fixture(scope="module")
def released_label(admin: Api) -> tuple[str, str]:
    """An approved label whose `serial` comes from a counter: (label id, counter name)."""
    counter = unique("flowserial").replace("-", "_")
    created = admin.post("/counters", json={"name": counter, "start": 500})
    assert created.status_code == 201, created.text
    document = {
        **LABEL,
        "variables": [
            *LABEL["variables"][:2],
            {**LABEL["variables"][2], "expression": f"string(counters.{counter})"},
        ],
    }
    label = admin.post(
        "/labels/from-dimensions",
        json={"name": unique("flowlabel"), "width_mm": 60, "height_mm": 30},
    ).json()
    patched = admin.request(
        "PATCH",
        f"/labels/{label['id']}/document",
        json={"operations": [{"op": "replace", "path": "", "value": document}]},
    )
    assert patched.status_code == 200, patched.text
    approved = admin.post(
        f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"}
    )
    assert approved.status_code == 200, approved.text
    return label["id"], counter


def _create(api: Api, document: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"name": unique("flow"), **extra}
    if document is not None:
        body["document"] = document
    response = api.post("/flows", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _patch(api: Api, flow_id: str, operations: list[dict[str, Any]], **extra: Any) -> Any:
    return api.request(
        "PATCH", f"/flows/{flow_id}/document", json={"operations": operations, **extra}
    )


def _codes(findings: list[dict[str, Any]]) -> set[str]:
    return {f["code"] for f in findings}


def test_registry_describes_every_node_type(designer: Api) -> None:
    items = designer.get("/flows/registry").json()["items"]
    types = {item["type"]: item for item in items}
    assert set(types) >= {
        "trigger.folder",
        "trigger.http",
        "trigger.schedule",
        "logic.set",
        "logic.filter",
        "logic.switch",
        "action.print",
        "action.http",
        "action.file",
        "action.log",
    }
    for item in items:
        assert item["category"] in ("trigger", "logic", "action")
        assert item["description"] and item["outputs"]
        assert item["fields"]["type"] == "object"
        # Every field, also those of nested objects (a switch's cases), can be authored from
        # the registry alone: each has a description and at least one example.
        objects = [("", item["fields"])]
        objects += [(f"$defs.{n}.", d) for n, d in item["fields"].get("$defs", {}).items()]
        for prefix, schema in objects:
            for name, field in schema["properties"].items():
                where = (item["type"], prefix + name)
                assert field.get("description"), where
                assert field.get("examples"), where
    assert types["trigger.folder"]["fields"]["properties"]["format"]["enum"] == [
        "csv",
        "json",
        "jsonl",
    ]


def test_create_read_rename_list_and_delete(designer: Api, approver: Api) -> None:
    flow = _create(designer, description="first")
    assert flow["id"].startswith("flw_") and flow["latest_version"] == 1
    # The creation's answer carries the lint of the version it saved, as a patch's does.
    created = {key: flow.pop(key) for key in ("version", "findings")}
    assert created["version"] == 1 and _codes(created["findings"]) == {"flow.no_trigger"}
    assert approver.get(f"/flows/{flow['id']}").json() == flow
    document = approver.get(f"/flows/{flow['id']}/document").json()
    assert document["version"] == 1 and document["document"]["nodes"] == []
    assert document["findings"] == created["findings"]

    renamed = designer.request(
        "PATCH", f"/flows/{flow['id']}", json={"name": "Zz renamed", "description": ""}
    )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == "Zz renamed" and renamed.json()["description"] is None

    seen, cursor = [], None
    while True:
        page = approver.get("/flows", params={"limit": 2, **({"cursor": cursor} if cursor else {})})
        assert page.status_code == 200
        seen += page.json()["items"]
        cursor = page.json()["next_cursor"]
        if not cursor:
            break
    assert flow["id"] in {f["id"] for f in seen}
    names = [f["name"].casefold() for f in seen]
    assert names == sorted(names)

    assert designer.delete(f"/flows/{flow['id']}").status_code == 204
    problem(approver.get(f"/flows/{flow['id']}"), 404, "flow.not_found")
    problem(designer.delete(f"/flows/{flow['id']}"), 404, "flow.not_found")


def test_documents_and_versions_work_like_labels(designer: Api, agent: Api) -> None:
    flow = _create(designer, _flow_document("lbl_01J00000000000000000000000"))
    flow_id = flow["id"]
    saved = _patch(
        agent,
        flow_id,
        [{"op": "replace", "path": "/nodes/2/condition", "value": "record.qty > 1"}],
        base_version=1,
        comment="only pairs",
    )
    assert saved.status_code == 200, saved.text
    assert saved.json()["version"] == 2
    assert "findings" in saved.json()

    stale = _patch(designer, flow_id, [{"op": "remove", "path": "/samples/0"}], base_version=1)
    problem(stale, 409, "document.version_conflict")
    problem(
        _patch(designer, flow_id, [{"op": "replace", "path": "/nodes/0/id", "value": "x"}]),
        422,
        "document.id_changed",
    )
    missing = problem(
        _patch(designer, flow_id, [{"op": "add", "path": "/nodes/0/wires/-", "value": "ghost"}]),
        422,
        "document.invalid",
    )
    assert "ghost" in missing["detail"]
    problem(
        _patch(designer, flow_id, [{"op": "add", "path": "/nodes/-", "value": {"id": "a b"}}]),
        422,
        "document.invalid",
    )
    # Removing a whole node keeps every other id (its wire must go with it).
    removed = _patch(
        designer,
        flow_id,
        [{"op": "remove", "path": "/nodes/4"}, {"op": "remove", "path": "/nodes/3/wires/0"}],
    )
    assert removed.status_code == 200, removed.text
    assert [n["id"] for n in removed.json()["document"]["nodes"]] == [
        "inbox",
        "shape",
        "some",
        "ship",
    ]

    versions = designer.get(f"/flows/{flow_id}/versions").json()["items"]
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert versions[1]["author"]["actor"] == "service" and versions[1]["comment"] == "only pairs"
    assert versions[2]["author"]["actor"] == "human"
    two = designer.get(f"/flows/{flow_id}/versions/2").json()
    assert two["document"]["nodes"][2]["condition"] == "record.qty > 1"
    problem(designer.get(f"/flows/{flow_id}/versions/9"), 404, "flow.version_not_found")
    assert designer.get(f"/flows/{flow_id}/document", params={"version": 1}).json()["version"] == 1
    assert designer.get(f"/flows/{flow_id}").json()["latest_version"] == 3


def test_well_formed_but_wrong_documents_are_saved_with_findings(designer: Api) -> None:
    flow = _create(designer, _flow_document("lbl_01J00000000000000000000000"))
    answer = _patch(
        designer,
        flow["id"],
        [
            {"op": "add", "path": "/nodes/-", "value": {"id": "odd", "type": "logic.teleport"}},
            {"op": "replace", "path": "/nodes/2/condition", "value": "record.qty >"},
            {"op": "add", "path": "/nodes/4/wires", "value": ["shape"]},
            {"op": "replace", "path": "/nodes/0/format", "value": "xml"},
        ],
    )
    assert answer.status_code == 200, answer.text
    findings = {f["code"]: f for f in answer.json()["findings"]}
    assert findings["flow.unknown_node_type"]["path"] == "/nodes/5/type"
    assert findings["flow.cel_invalid"]["path"] == "/nodes/2/condition"
    assert findings["flow.cel_invalid"]["node_id"] == "some"
    assert findings["flow.cycle"]["params"]["cycle"][0] in {"shape", "some", "ship", "note"}
    assert findings["flow.field_invalid"]["path"] == "/nodes/0/format"
    assert findings["flow.unreachable_node"]["severity"] == "warning"
    assert findings["flow.label_not_found"]["path"] == "/nodes/3/label"


def test_lint_checks_label_references(
    designer: Api, operator: Api, released_label: tuple[str, str]
) -> None:
    label_id, _ = released_label
    draft = designer.post(
        "/labels/from-dimensions", json={"name": unique("draft"), "width_mm": 50, "height_mm": 30}
    ).json()["id"]
    document = _flow_document(label_id)
    document["nodes"][3]["variables"] = {"name": "record.name", "colour": "'red'", "serial": "'1'"}
    flow = _create(designer, document)
    _patch(
        designer,
        flow["id"],
        [
            {
                "op": "add",
                "path": "/nodes/-",
                "value": {
                    "id": "draft_print",
                    "type": "action.print",
                    "label": draft,
                    "printer": "shipping",
                },
            },
            {"op": "add", "path": "/nodes/0/wires/-", "value": "draft_print"},
        ],
    )
    lint = operator.post(f"/flows/{flow['id']}/lint", json={})
    assert lint.status_code == 200, lint.text
    assert lint.json()["version"] == 2
    by_code: dict[str, list[dict[str, Any]]] = {}
    for finding in lint.json()["findings"]:
        by_code.setdefault(finding["code"], []).append(finding)
    unknown = {f["params"]["variable"] for f in by_code["flow.label_variable_unknown"]}
    assert unknown == {"colour", "serial"}  # unknown, and computed by the label itself
    assert by_code["flow.label_not_released"][0]["node_id"] == "draft_print"
    assert "flow.label_not_found" not in by_code
    version_one = operator.post(f"/flows/{flow['id']}/lint", json={"version": 1}).json()
    assert version_one["version"] == 1 and "flow.label_not_released" not in _codes(
        version_one["findings"]
    )
    missing = _create(designer, {**_flow_document(label_id)})
    _patch(designer, missing["id"], [{"op": "replace", "path": "/nodes/3/variables", "value": {}}])
    findings = operator.post(f"/flows/{missing['id']}/lint").json()["findings"]
    assert [f["params"].get("missing") for f in findings if f["code"].endswith("unknown")] == [True]


def _counter(api: Api, name: str) -> dict[str, Any]:
    response = api.get(f"/counters/{name}")
    assert response.status_code == 200, response.text
    return response.json()


def test_dry_run_traces_and_lists_side_effects_without_performing_them(
    admin: Api, operator: Api, released_label: tuple[str, str]
) -> None:
    label_id, counter = released_label
    flow = _create(admin, _flow_document(label_id))
    jobs_before = admin.get("/print-archive", params={"limit": 200}).json()["items"]
    counter_before = _counter(admin, counter)

    answer = operator.post(f"/flows/{flow['id']}/dry-run", json={})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["version"] == 1 and body["trigger"] == "inbox"
    first, second = body["runs"]
    assert first["source"] == {"name": "anna", "qty": "2"} and first["errors"] == []
    assert [s["status"] for s in first["trace"]] == ["executed"] * 5
    assert first["trace"][1]["output"] == {"name": "ANNA", "qty": 2}
    (printed, logged) = first["side_effects"]
    assert printed["kind"] == "print" and printed["performed"] is False
    detail = printed["detail"]
    assert detail["label"] == label_id and detail["version"] == 2
    assert detail["printer"] == "shipping" and detail["copies"] == 2
    assert detail["resolved_variables"]["name"] == "ANNA"
    assert detail["counter_values"] == {counter: 500}
    assert detail["resolved_variables"]["serial"] == "500"
    assert logged == {
        "node_id": "note",
        "kind": "log",
        "performed": False,
        "detail": {"level": "info", "message": "printed ANNA"},
    }
    # qty 0 stops at the filter: the print and log nodes are skipped, nothing happens.
    assert [s["status"] for s in second["trace"]] == [
        "executed",
        "executed",
        "executed",
        "skipped",
        "skipped",
    ]
    assert second["side_effects"] == []

    more = operator.post(
        f"/flows/{flow['id']}/dry-run",
        json={"samples": [{"name": "a", "qty": "3"}, {"name": "b", "qty": "1"}]},
    ).json()
    values = [run["side_effects"][0]["detail"]["counter_values"][counter] for run in more["runs"]]
    assert values == [500, 503]  # the second print follows the first one's three labels

    assert _counter(admin, counter) == counter_before
    assert admin.get("/print-archive", params={"limit": 200}).json()["items"] == jobs_before


def test_a_failing_record_fails_alone(designer: Api, released_label: tuple[str, str]) -> None:
    label_id, _ = released_label
    flow = _create(designer, _flow_document(label_id))
    body = designer.post(
        f"/flows/{flow['id']}/dry-run",
        json={
            "samples": [{"name": "ok", "qty": "1"}, {"name": "bad", "qty": "many"}, {"qty": "1"}]
        },
    ).json()
    ok, bad, nameless = body["runs"]
    assert ok["errors"] == []
    assert bad["errors"][0]["node_id"] == "shape"
    assert bad["trace"][1]["status"] == "error" and "int" in bad["trace"][1]["message"]
    assert nameless["errors"][0]["node_id"] == "shape"


def test_dry_run_refusals(designer: Api) -> None:
    empty = _create(designer)
    problem(designer.post(f"/flows/{empty['id']}/dry-run", json={}), 422, "flow.no_trigger")
    flow = _create(designer, _flow_document("lbl_01J00000000000000000000000"))
    problem(
        designer.post(f"/flows/{flow['id']}/dry-run", json={"trigger": "ship"}),
        422,
        "request.invalid",
    )
    problem(designer.post("/flows/flw_nope/dry-run", json={}), 404, "flow.not_found")
    runs = designer.post(f"/flows/{flow['id']}/dry-run", json={}).json()["runs"]
    assert runs[0]["errors"][0]["node_id"] == "ship"  # the label does not exist
    assert designer.get(f"/flows/{flow['id']}/runs").json() == {"items": [], "next_cursor": None}


def test_a_flow_with_a_cycle_is_refused_for_dry_runs_and_deployments(
    designer: Api, admin: Api
) -> None:
    looping = {
        "nodes": [
            {"id": "in", "type": "trigger.http", "path": "loop", "wires": ["a"]},
            {"id": "a", "type": "action.log", "message": "'a'", "wires": ["b"]},
            {"id": "b", "type": "logic.set", "values": {"n": "1"}, "wires": ["a"]},
        ],
        "samples": [{}],
    }
    flow = _create(designer, looping)
    refused = problem(
        designer.post(f"/flows/{flow['id']}/dry-run", json={}), 422, "flow.not_runnable"
    )
    assert [f["code"] for f in refused["params"]["findings"]] == ["flow.cycle"]
    assert refused["params"]["findings"][0]["params"]["cycle"] == ["a", "b", "a"]
    group = admin.post("/runner-groups", json={"name": unique("loops")}).json()["id"]
    deployment = problem(
        admin.post(
            "/deployments",
            json={"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [group]}]},
        ),
        422,
        "deployment.flow_has_errors",
    )
    assert "flow.cycle" in {f["code"] for f in deployment["params"]["findings"]}
    # Without the wire back the same flow runs.
    fixed = _patch(designer, flow["id"], [{"op": "remove", "path": "/nodes/2/wires/0"}])
    assert fixed.status_code == 200, fixed.text
    runs = designer.post(f"/flows/{flow['id']}/dry-run", json={}).json()["runs"]
    assert runs[0]["errors"] == []


def test_dry_runs_see_a_runner_placeholder_a_given_runner_or_an_enrolled_one(
    designer: Api, admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    flow = _create(
        designer,
        {
            "nodes": [
                {"id": "in", "type": "trigger.http", "path": "who", "wires": ["who"]},
                {
                    "id": "who",
                    "type": "logic.set",
                    "values": {
                        "at": "runner.name + '@' + runner.group_id + '/' + runner.id",
                        "site": "has(context.site) ? context.site : 'none'",
                    },
                },
            ],
            "samples": [{}],
        },
    )

    def seen(body: dict[str, Any]) -> dict[str, Any]:
        answer = designer.post(f"/flows/{flow['id']}/dry-run", json=body)
        assert answer.status_code == 200, answer.text
        (run,) = answer.json()["runs"]
        assert run["errors"] == [], run["errors"]
        return dict(run["trace"][1]["output"])

    assert seen({}) == {"at": "dry-run@rgp_dry_run/run_dry_run", "site": "none"}
    given = {"id": "run_1", "name": "Halle 3", "group_id": "rgp_7"}
    assert seen({"runner": given, "context": {"site": "x"}}) == {
        "at": "Halle 3@rgp_7/run_1",
        "site": "x",
    }

    group = admin.post("/runner-groups", json={"name": unique("dry")}).json()["id"]
    token = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={}).json()["token"]
    site = FakeSite(tmp_path, unique("dry-site"))
    assert site.enroll(admin, token).status_code == 201
    runner_id = site.enrollment["runner_id"]
    name = admin.get(f"/runners/{runner_id}").json()["name"]
    admin.request("PUT", f"/runner-groups/{group}/context/site", json={"value": "group"})
    assert seen({"runner_id": runner_id}) == {
        "at": f"{name}@{group}/{runner_id}",
        "site": "group",
    }
    admin.request("PUT", f"/runners/{runner_id}/context/site", json={"value": "runner"})
    assert seen({"runner_id": runner_id})["site"] == "runner"  # the Runner's own wins
    assert seen({"runner_id": runner_id, "context": {"site": "asked"}})["site"] == "asked"
    problem(
        designer.post(f"/flows/{flow['id']}/dry-run", json={"runner_id": "run_nope"}),
        404,
        "runner.not_found",
    )
    problem(
        designer.post(
            f"/flows/{flow['id']}/dry-run", json={"runner_id": runner_id, "runner": given}
        ),
        422,
        "request.invalid",
    )


def test_roles(admin: Api, designer: Api, operator: Api, approver: Api, anonymous: Api) -> None:
    flow = _create(designer, _flow_document("lbl_01J00000000000000000000000"))
    flow_id = flow["id"]
    problem(anonymous.get("/flows"), 401, "auth.unauthenticated")
    for api in (operator, approver):
        problem(api.post("/flows", json={"name": "x"}), 403, "auth.forbidden")
        problem(_patch(api, flow_id, []), 403, "auth.forbidden")
        problem(
            api.request("PATCH", f"/flows/{flow_id}", json={"name": "x"}), 403, "auth.forbidden"
        )
        problem(api.delete(f"/flows/{flow_id}"), 403, "auth.forbidden")
        for path in ("", "/document", "/versions", "/versions/1", "/runs"):
            assert api.get(f"/flows/{flow_id}{path}").status_code == 200, path
    assert operator.post(f"/flows/{flow_id}/lint").status_code == 200
    assert operator.post(f"/flows/{flow_id}/dry-run").status_code == 200
    problem(approver.post(f"/flows/{flow_id}/lint"), 403, "auth.forbidden")
    problem(approver.post(f"/flows/{flow_id}/dry-run"), 403, "auth.forbidden")
    assert admin.post(f"/flows/{flow_id}/lint").status_code == 200


def test_bad_input_is_a_clear_problem(designer: Api) -> None:
    problem(designer.post("/flows", json={"name": ""}), 422, "request.invalid")
    malformed = problem(
        designer.post(
            "/flows", json={"name": "x", "document": {"nodes": [{"id": "a", "type": "Trigger"}]}}
        ),
        422,
        "document.invalid",
    )
    assert malformed["params"]["errors"][0]["path"] == "/nodes/0/type"
    twice = problem(
        designer.post(
            "/flows",
            json={
                "name": "x",
                "document": {
                    "nodes": [{"id": "a", "type": "logic.set"}, {"id": "a", "type": "logic.set"}]
                },
            },
        ),
        422,
        "document.invalid",
    )
    assert "used twice" in twice["detail"]
    huge = {"nodes": [{"id": f"n{i}", "type": "action.log", "message": "'x'"} for i in range(201)]}
    problem(designer.post("/flows", json={"name": "x", "document": huge}), 422, "document.invalid")
    before = designer.get("/flows", params={"limit": 200}).json()["items"]
    assert all(f["name"] != "x" for f in before)  # nothing half-created


def test_a_document_over_the_size_limit_is_refused_with_413(designer: Api) -> None:
    """350 KB compressed: random text does not compress, so 100 samples of 6,000 characters of
    it are over the limit; nothing is created or saved."""
    import base64
    import os

    noise = [{"blob": base64.b64encode(os.urandom(4500)).decode()} for _ in range(100)]
    name = unique("toolarge")
    refused = problem(
        designer.post("/flows", json={"name": name, "document": {"samples": noise}}),
        413,
        "document.too_large",
    )
    assert refused["params"]["limit"] == 350_000 and refused["params"]["size"] > 350_000
    listed = designer.get("/flows", params={"limit": 200}).json()["items"]
    assert name not in {f["name"] for f in listed}

    flow = _create(designer)
    problem(
        _patch(designer, flow["id"], [{"op": "add", "path": "/samples", "value": noise}]),
        413,
        "document.too_large",
    )
    assert designer.get(f"/flows/{flow['id']}").json()["latest_version"] == 1


def test_patch_answers_carry_the_version_status(designer: Api, admin: Api, approver: Api) -> None:
    """Flow versions are `draft` until deployed once, then `deployed`; patch and document
    answers and version lists say which, as they do for labels."""
    document = {
        "nodes": [
            {"id": "in", "type": "trigger.schedule", "every_s": 60, "wires": ["log"]},
            {"id": "log", "type": "action.log", "message": "'x'"},
        ]
    }
    flow = _create(designer, document)
    saved = _patch(
        designer, flow["id"], [{"op": "replace", "path": "/nodes/1/message", "value": "'y'"}]
    )
    assert saved.status_code == 200, saved.text
    assert (saved.json()["version"], saved.json()["status"]) == (2, "draft")
    group = admin.post("/runner-groups", json={"name": unique("status")}).json()["id"]
    deployment = admin.post(
        "/deployments",
        json={"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [group]}]},
    ).json()
    assert (
        designer.get(f"/flows/{flow['id']}/document", params={"version": 1}).json()["status"]
        == "draft"
    )  # created, not yet rolled out
    approved = approver.post(f"/deployments/{deployment['id']}/approval", json={"stage": 0})
    assert approved.status_code == 200, approved.text
    assert (
        designer.get(f"/flows/{flow['id']}/document", params={"version": 1}).json()["status"]
        == "deployed"
    )
    versions = designer.get(f"/flows/{flow['id']}/versions").json()["items"]
    assert [(v["version"], v["status"]) for v in versions] == [(2, "draft"), (1, "deployed")]
    assert designer.get(f"/flows/{flow['id']}/versions/1").json()["status"] == "deployed"


def test_unsaved_changes_are_linted_and_dry_run_without_being_saved(
    designer: Api, operator: Api, approver: Api, released_label: tuple[str, str]
) -> None:
    """The editor's path: its unsaved document linted against the names it knows, dry-run and
    previewed as it would print; nothing of it is saved, and bad input is a problem."""
    label_id, counter = released_label
    flow = _create(designer, _flow_document(label_id))
    unsaved = _flow_document(label_id)
    unsaved["nodes"][2]["condition"] = "record.qtty > 0 && context.hall == '3'"
    unsaved["nodes"] = [
        {**n, "ui": {"x": 200 * i, "y": 40}} for i, n in enumerate(unsaved["nodes"])
    ]
    lint = operator.post(
        f"/flows/{flow['id']}/lint",
        json={"document": unsaved, "scope": {"record": ["name", "qty"], "context": ["line"]}},
    )
    assert lint.status_code == 200, lint.text
    answer = lint.json()
    assert answer["version"] is None
    unknown = [
        (f["path"], f["params"]["name"], f["severity"])
        for f in answer["findings"]
        if f["code"] == "flow.cel_name_unknown"
    ]
    assert unknown == [
        ("/nodes/2/condition", "record.qtty", "warning"),
        ("/nodes/2/condition", "context.hall", "warning"),
    ]
    assert answer["record_fields"]["ship"] == ["name", "qty"]
    assert answer["record_fields"]["note"] == ["name", "print", "qty"]
    saved = designer.post(f"/flows/{flow['id']}/lint", json={}).json()
    assert saved["version"] == 1 and saved["record_fields"] is None
    assert not _codes(saved["findings"])  # the saved version knows nothing of the typo

    unsaved["nodes"][2]["condition"] = "record.qty > 1"
    ran = designer.post(
        f"/flows/{flow['id']}/dry-run",
        json={
            "document": unsaved,
            "samples": [{"name": "a", "qty": "2"}, {"name": "b", "qty": "1"}],
        },
    )
    assert ran.status_code == 200, ran.text
    runs = ran.json()["runs"]
    assert ran.json()["version"] is None
    assert [len(run["side_effects"]) for run in runs] == [2, 0]  # 1 no longer passes the filter
    detail = runs[0]["side_effects"][0]["detail"]
    assert detail["counter_values"] == {counter: 500}
    assert designer.get(f"/flows/{flow['id']}").json()["latest_version"] == 1

    # The label as that print would come out: its counter value, no sample where none is mapped.
    shown = designer.post(
        f"/labels/{label_id}/preview",
        params={"version": detail["version"]},
        json={"variables": detail["variables"], "counters": {counter: "4711"}, "samples": False},
    )
    assert shown.status_code == 200, shown.text
    plain = designer.post(
        f"/labels/{label_id}/preview",
        params={"version": detail["version"]},
        json={"variables": detail["variables"]},
    )
    assert shown.content != plain.content  # 4711 instead of the counter's next value 500
    problem(
        designer.post(f"/labels/{label_id}/preview", json={"counters": {"x": "x" * 101}}),
        422,
        "request.invalid",
    )

    problem(
        operator.post(f"/flows/{flow['id']}/lint", json={"version": 1, "document": unsaved}),
        422,
        "request.invalid",
    )
    broken = {"nodes": [{"id": "a", "type": "action.log", "wires": ["nowhere"]}]}
    for operation in ("lint", "dry-run"):
        found = problem(
            designer.post(f"/flows/{flow['id']}/{operation}", json={"document": broken}),
            422,
            "document.invalid",
        )
        assert found["params"]["errors"][0]["path"] == "/nodes/0/wires/0"
        problem(
            designer.post(f"/flows/flw_nope/{operation}", json={"document": unsaved}),
            404,
            "flow.not_found",
        )
    problem(
        approver.post(f"/flows/{flow['id']}/lint", json={"document": unsaved}),
        403,
        "auth.forbidden",
    )
    assert designer.get(f"/flows/{flow['id']}/versions").json()["items"][0]["version"] == 1


@pytest.mark.parametrize(
    "path", ["..", "in/../../state", "C:\\Runner\\state", "in\u0000", "//host/share"]
)
def test_a_folder_path_that_could_escape_is_refused_and_nothing_is_saved(
    designer: Api, path: str
) -> None:
    """Issue 23, item 2: 422 `flow.path_refused` with the lint finding, at create and patch."""
    nodes = [
        {"id": "in", "type": "trigger.folder", "path": path, "wires": ["log"]},
        {"id": "log", "type": "action.log", "message": "'got one'"},
    ]
    name = unique("escape")
    created = designer.post("/flows", json={"name": name, "document": {"nodes": nodes}})
    refused = problem(created, 422, "flow.path_refused")
    (finding,) = refused["params"]["findings"]
    assert (finding["code"], finding["path"], finding["node_id"]) == (
        "flow.path_refused",
        "/nodes/0/path",
        "in",
    )
    assert name not in designer.get("/flows", params={"limit": 200}).text

    # The same through a patch of a sound flow: no new version.
    sound = [{**nodes[0], "path": "/srv/labels/in"}, nodes[1]]
    flow = designer.post("/flows", json={"name": name, "document": {"nodes": sound}}).json()
    operations = [{"op": "replace", "path": "/nodes/0/path", "value": path}]
    patched = designer.request(
        "PATCH", f"/flows/{flow['id']}/document", json={"operations": operations}
    )
    problem(patched, 422, "flow.path_refused")
    assert designer.get(f"/flows/{flow['id']}").json()["latest_version"] == 1

    # A constant action.file path is checked by its value; one built from the record is the
    # Runner's to check when it runs.
    write = {"id": "log", "type": "action.file", "content": "record"}
    for source, status in (('"../" + "key.pem"', 422), ('"out/" + record.id + ".txt"', 200)):
        operations = [{"op": "replace", "path": "/nodes/1", "value": {**write, "path": source}}]
        answer = designer.request(
            "PATCH", f"/flows/{flow['id']}/document", json={"operations": operations}
        )
        assert answer.status_code == status, answer.text
