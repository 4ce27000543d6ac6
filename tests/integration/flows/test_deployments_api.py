"""Deployments over REST: staged approval, the human-approval policy, supersede and rollback,
context and printer aliases, and refusals. Groups without Runners here: a stage whose groups
have no Runner is active once approved (the Runner side is tested end to end)."""

from __future__ import annotations

from typing import Any

import pytest

from support.client import Api, problem, unique

DOCUMENT = {
    "nodes": [
        {"id": "in", "type": "trigger.schedule", "every_s": 60, "wires": ["log"]},
        {"id": "log", "type": "action.log", "message": "context.site"},
    ]
}


@pytest.fixture(scope="module")
def operator(admin: Api) -> Api:
    return admin.user_session(["operator"])[1]


@pytest.fixture(scope="module")
def approver(admin: Api) -> Api:
    return admin.user_session(["approver"])[1]


@pytest.fixture(scope="module")
def agent_operator(admin: Api) -> Api:
    return admin.as_token(admin.service_token("operator")["token"])


@pytest.fixture(scope="module")
def agent_approver(admin: Api) -> Api:
    return admin.as_token(admin.service_token("approver")["token"])


def _group(admin: Api) -> str:
    response = admin.post("/runner-groups", json={"name": unique("site")})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _flow(admin: Api, document: dict[str, Any] = DOCUMENT) -> str:
    response = admin.post("/flows", json={"name": unique("deployed"), "document": document})
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _deploy(api: Api, flow_id: str, stages: list[list[str]], version: int = 1, **extra: Any):
    return api.post(
        "/deployments",
        json={
            "flow_id": flow_id,
            "version": version,
            "stages": [{"group_ids": g} for g in stages],
            **extra,
        },
    )


def _approve(api: Api, deployment_id: str, stage: int) -> dict[str, Any]:
    response = api.post(f"/deployments/{deployment_id}/approval", json={"stage": stage})
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_stages_wait_for_approval_one_after_the_other(
    admin: Api, operator: Api, approver: Api
) -> None:
    first, second = _group(admin), _group(admin)
    flow_id = _flow(admin)
    created = _deploy(operator, flow_id, [[first], [second]], context={"site": "Hall 1"})
    assert created.status_code == 201, created.text
    deployment = created.json()
    assert deployment["status"] == "awaiting_approval"
    assert [s["status"] for s in deployment["stages"]] == ["awaiting_approval", "pending"]
    assert deployment["author"] == {"actor": "human", "subject": deployment["author"]["subject"]}

    problem(
        approver.post(f"/deployments/{deployment['id']}/approval", json={"stage": 1}),
        409,
        "deployment.stage_not_awaiting",
    )
    after_first = _approve(approver, deployment["id"], 0)
    assert [s["status"] for s in after_first["stages"]] == ["active", "awaiting_approval"]
    assert after_first["stages"][0]["approved_by"] and after_first["stages"][0]["approved_at"]
    assert after_first["status"] == "awaiting_approval"
    done = _approve(approver, deployment["id"], 1)
    assert done["status"] == "active" and [s["status"] for s in done["stages"]] == [
        "active",
        "active",
    ]
    listed = admin.get(f"/runner-groups/{second}/deployments").json()["items"]
    assert [d["id"] for d in listed] == [deployment["id"]]
    assert deployment["id"] in {
        d["id"] for d in admin.get("/deployments", params={"flow_id": flow_id}).json()["items"]
    }
    audit = admin.get("/audit-log", params={"target": deployment["id"]}).json()["items"]
    assert {e["operation_id"] for e in audit} >= {"createDeployment", "postDeploymentApproval"}


def test_the_policy_asks_a_person_for_new_versions_and_approvals(
    admin: Api, operator: Api, approver: Api, agent_operator: Api, agent_approver: Api
) -> None:
    group = _group(admin)
    flow_id = _flow(admin)
    refused = problem(_deploy(agent_operator, flow_id, [[group]]), 403, "policy.human_required")
    assert refused["params"]["version"] == 1
    deployment = _deploy(operator, flow_id, [[group]]).json()
    problem(
        agent_approver.post(f"/deployments/{deployment['id']}/approval", json={"stage": 0}),
        403,
        "policy.human_required",
    )
    _approve(approver, deployment["id"], 0)
    # Deployed once: an agent may deploy the same version again, and roll back.
    again = _deploy(agent_operator, flow_id, [[_group(admin)]])
    assert again.status_code == 201, again.text
    rolled = agent_operator.post(f"/deployments/{again.json()['id']}/rollback", json={})
    assert rolled.status_code == 200 and rolled.json()["status"] == "rolled_back"
    problem(operator.post("/deployments", json={"flow_id": flow_id}), 422, "request.invalid")
    problem(
        approver.post(f"/deployments/{deployment['id']}/rollback", json={}), 403, "auth.forbidden"
    )


def test_newer_deployments_supersede_and_rollback_restores(
    admin: Api, operator: Api, approver: Api
) -> None:
    group = _group(admin)
    flow_id = _flow(admin)
    old = _deploy(operator, flow_id, [[group]]).json()
    _approve(approver, old["id"], 0)
    patched = admin.request(
        "PATCH",
        f"/flows/{flow_id}/document",
        json={"operations": [{"op": "replace", "path": "/nodes/1/message", "value": "'v2'"}]},
    )
    assert patched.status_code == 200
    new = _deploy(operator, flow_id, [[group]], version=2).json()
    assert admin.get(f"/deployments/{old['id']}").json()["status"] == "active"
    _approve(approver, new["id"], 0)
    assert admin.get(f"/deployments/{old['id']}").json()["status"] == "superseded"
    problem(operator.post(f"/deployments/{old['id']}/rollback", json={}), 409, "deployment.ended")
    problem(admin.delete(f"/flows/{flow_id}"), 409, "flow.in_use")

    rolled = operator.post(f"/deployments/{new['id']}/rollback", json={"comment": "bad labels"})
    assert rolled.status_code == 200, rolled.text
    assert rolled.json()["status"] == "rolled_back"
    entry = admin.get("/audit-log", params={"target": new["id"]}).json()["items"][0]
    assert entry["operation_id"] == "postDeploymentRollback"
    assert entry["details"]["restored"] == {group: f"{old['id']}@1"}
    # The group runs the old deployment again: it is active, and its flow is in use until it
    # is rolled back in turn.
    assert admin.get(f"/deployments/{old['id']}").json()["status"] == "active"
    problem(admin.delete(f"/flows/{flow_id}"), 409, "flow.in_use")
    assert operator.post(f"/deployments/{old['id']}/rollback", json={}).status_code == 200
    assert admin.delete(f"/flows/{flow_id}").status_code == 204  # nothing uses it any more


def test_context_and_printer_aliases(admin: Api, operator: Api, approver: Api) -> None:
    deployment = _deploy(operator, _flow(admin), [[_group(admin)]], context={"site": "A"}).json()
    base = f"/deployments/{deployment['id']}"
    problem(approver.get(f"{base}/context"), 403, "auth.forbidden")
    assert operator.get(f"{base}/context").json()["items"][0]["value"] == "A"
    put = operator.request("PUT", f"{base}/context/line", json={"value": {"n": 3}})
    assert put.status_code == 200, put.text
    names = {c["name"]: c["value"] for c in operator.get(f"{base}/context").json()["items"]}
    assert names == {"site": "A", "line": {"n": 3}}
    assert operator.delete(f"{base}/context/line").status_code == 204
    problem(operator.delete(f"{base}/context/line"), 404, "context.not_found")
    problem(
        operator.request("PUT", f"{base}/context/bad name", json={"value": 1}),
        422,
        "request.invalid",
    )
    problem(
        operator.request("PUT", f"{base}/printers/shipping", json={"printer_id": "prn_nope"}),
        404,
        "printer.not_found",
    )
    assert admin.get(f"{base}/printers").json() == {"items": [], "next_cursor": None}
    problem(operator.delete(f"{base}/printers/shipping"), 404, "deployment.printer_not_found")


def test_refusals(admin: Api, operator: Api) -> None:
    group = _group(admin)
    broken = _flow(admin, {"nodes": [{"id": "log", "type": "action.log", "message": "'x'"}]})
    refused = problem(_deploy(operator, broken, [[group]]), 422, "deployment.flow_has_errors")
    assert refused["params"]["findings"][0]["code"] == "flow.no_trigger"
    flow_id = _flow(admin)
    problem(_deploy(operator, flow_id, [[group]], version=7), 404, "flow.version_not_found")
    problem(_deploy(operator, flow_id, [["rgp_nope"]]), 404, "runner_group.not_found")
    problem(_deploy(operator, flow_id, [[group], [group]]), 422, "request.invalid")
    problem(admin.get("/deployments/dep_nope"), 404, "deployment.not_found")
    assert (
        _deploy(
            admin.as_token(admin.service_token("designer")["token"]), flow_id, [[group]]
        ).status_code
        == 403
    )
