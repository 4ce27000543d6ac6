"""Numbers DynamoDB cannot store are refused with 422 naming the field, wherever a request brings
them (issue 23, item 10): what schemathesis found (`PUT …/context/{name}` with
`{"value": 1.8778957114004295e-148}`, a 500), and the same check for every other body, deep
inside objects and lists, the Runner's agent channel included. Nothing is written."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer

FOUND = 1.8778957114004295e-148  # the fuzzer's number: below DynamoDB's 1E-130


@pytest.fixture(scope="module")
def group(admin: Api) -> str:
    return str(admin.post("/runner-groups", json={"name": unique("numbers")}).json()["id"])


def _field(response: Any) -> str:
    fields = problem(response, 422, "request.invalid")["params"]["fields"]
    assert fields[0]["type"] == "number_out_of_range", fields
    return str(fields[0]["field"])


def test_the_fuzzers_context_value_is_refused_naming_the_field(admin: Api, group: str) -> None:
    name = unique("weight")
    path = f"/runner-groups/{group}/context/{name}"
    assert _field(admin.request("PUT", path, json={"value": FOUND})) == "body.value"
    assert name not in admin.get(f"/runner-groups/{group}/context").text  # nothing written
    trail = admin.get("/audit-log", params={"target": group, "limit": 20}).json()["items"]
    assert any(e["outcome"] == "refused" and e["code"] == "request.invalid" for e in trail)
    # A number DynamoDB takes is stored as before.
    stored = admin.request("PUT", path, json={"value": 1e-130})
    assert stored.status_code == 200 and stored.json()["value"] == 1e-130


@pytest.mark.parametrize(
    ("value", "field"),
    [
        ({"weights": [1.5, FOUND]}, "body.value.weights.1"),
        ([[1, 2], [3, 10**39 + 7]], "body.value.1.1"),  # 40 significant digits
        ({"max": 1e126}, "body.value.max"),
        (-1e200, "body.value"),
    ],
)
def test_nested_and_large_numbers_are_refused_too(
    admin: Api, group: str, value: Any, field: str
) -> None:
    response = admin.request(
        "PUT", f"/runner-groups/{group}/context/{unique('x')}", json={"value": value}
    )
    assert _field(response) == field


@pytest.mark.parametrize("text", ["1e400", "-1e400", "NaN", "Infinity"])
def test_what_json_parsers_turn_into_infinity_or_nan_is_refused(
    admin: Api, group: str, text: str
) -> None:
    response = admin.request(
        "PUT",
        f"/runner-groups/{group}/context/{unique('x')}",
        content=f'{{"value": {text}}}'.encode(),
        headers={"content-type": "application/json"},
    )
    assert _field(response) == "body.value"


def test_every_operation_meets_the_same_check(admin: Api, group: str) -> None:
    """Deployment context (at creation and later), print variables and record fields, counters."""
    flow = admin.post(
        "/flows",
        json={
            "name": unique("numbers"),
            "document": {
                "nodes": [
                    {"id": "in", "type": "trigger.schedule", "every_s": 60, "wires": ["log"]},
                    {"id": "log", "type": "action.log", "message": "'tick'"},
                ]
            },
        },
    ).json()
    stages = [{"group_ids": [group]}]
    created = admin.post(
        "/deployments",
        json={"flow_id": flow["id"], "version": 1, "stages": stages, "context": {"k": FOUND}},
    )
    assert _field(created) == "body.context.k"
    deployment = admin.post(
        "/deployments", json={"flow_id": flow["id"], "version": 1, "stages": stages}
    ).json()
    put = admin.request(
        "PUT", f"/deployments/{deployment['id']}/context/k", json={"value": {"a": [FOUND]}}
    )
    assert _field(put) == "body.value.a.0"
    printed = admin.post(
        "/print",
        json={"label_id": "lbl_nope", "printer": "nope", "data": [{"qty": 1}, {"qty": FOUND}]},
    )
    assert _field(printed) == "body.data.1.qty"
    counter = admin.post("/counters", json={"name": unique("c").replace("-", "_"), "start": 1e-300})
    assert _field(counter) == "body.start"


def test_the_agent_channel_meets_it_too(
    admin: Api, dev_server: DevServer, group: str, tmp_path: Path
) -> None:
    """A Runner's run report with a record count of 39 significant digits, which DynamoDB
    refuses (moto would store it), is refused before anything is written."""
    token = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={}).json()["token"]
    site = FakeSite(tmp_path, unique("site"))
    assert site.enroll(admin, token).status_code == 201
    agent = site.agent(dev_server)
    report = {
        "id": unique("run"),
        "deployment_id": "dep_nope",
        "trigger": {"node_id": "in", "source": "x"},
        "started_at": "2026-11-27T10:00:00Z",
        "finished_at": "2026-11-27T10:00:01Z",
        "outcome": "succeeded",
        "records": 123456789012345678901234567890123456789,
        "trace": [{"weight": 2.5}],
    }
    assert _field(agent.post("/flow-runs", json=report)) == "body.records"
    report["records"], report["trace"] = 1, [{"weight": FOUND}]
    assert _field(agent.post("/flow-runs", json=report)) == "body.trace.0.weight"


def test_version_numbers_in_paths_and_queries_are_bounded(admin: Api) -> None:
    """A version number in a path or query is a DynamoDB key: bounded as references write it
    (nine digits), so a 40-digit one is 422 naming it, not a key DynamoDB refuses."""
    flow = admin.post("/flows", json={"name": unique("numbers")}).json()
    label = admin.post(
        "/labels/from-dimensions", json={"name": unique("numbers"), "width_mm": 50, "height_mm": 30}
    ).json()
    huge = str(10**39 + 7)
    for path, params, field in (
        (f"/flows/{flow['id']}/document", {"version": huge}, "query.version"),
        (f"/flows/{flow['id']}/versions/{huge}", {}, "path.version"),
        (f"/labels/{label['id']}/document", {"version": huge}, "query.version"),
        (f"/labels/{label['id']}/versions/{huge}", {}, "path.version"),
    ):
        fields = problem(admin.get(path, params=params), 422, "request.invalid")["params"]
        assert fields["fields"][0]["field"] == field, (path, fields)
    assert admin.get(f"/flows/{flow['id']}/versions/1").status_code == 200
