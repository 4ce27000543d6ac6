"""Deployments over REST: staged approval, the human-approval policy, supersede and rollback,
context and printer aliases, and refusals. Groups without Runners here: a stage whose groups
have no Runner is active once approved (the Runner side is tested end to end)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer

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
    # The old deployment runs again: it says so, and it uses its flow again.
    restored = admin.get(f"/deployments/{old['id']}").json()
    assert restored["status"] == "active"
    assert restored["id"] in {
        d["id"] for d in admin.get("/deployments", params={"status": "active"}).json()["items"]
    }
    refused = problem(admin.delete(f"/flows/{flow_id}"), 409, "flow.in_use")
    assert refused["params"]["deployment_ids"] == [old["id"]]
    # Rolled back in turn, the group runs nothing: now the flow may go.
    again = operator.post(f"/deployments/{old['id']}/rollback", json={})
    assert again.status_code == 200 and again.json()["status"] == "rolled_back"
    assert admin.delete(f"/flows/{flow_id}").status_code == 204  # nothing uses it any more


def test_a_rollback_never_brings_back_a_deployment_rolled_back_meanwhile(
    admin: Api, operator: Api, approver: Api
) -> None:
    here, there = _group(admin), _group(admin)
    flow_id = _flow(admin)
    old = _deploy(operator, flow_id, [[here, there]]).json()
    _approve(approver, old["id"], 0)
    new = _deploy(operator, flow_id, [[here]]).json()
    _approve(approver, new["id"], 0)
    assert admin.get(f"/deployments/{old['id']}").json()["status"] == "active"  # still `there`
    assert operator.post(f"/deployments/{old['id']}/rollback", json={}).status_code == 200
    rolled = operator.post(f"/deployments/{new['id']}/rollback", json={})
    assert rolled.status_code == 200, rolled.text
    entry = admin.get("/audit-log", params={"target": new["id"]}).json()["items"][0]
    assert entry["details"]["restored"] == {} and entry["details"]["stopped"] == [here]
    assert admin.get(f"/deployments/{old['id']}").json()["status"] == "rolled_back"
    assert admin.delete(f"/flows/{flow_id}").status_code == 204


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


def test_context_values_are_bounded_and_a_full_deployment_still_moves(
    admin: Api, operator: Api, approver: Api
) -> None:
    group, flow_id = _group(admin), _flow(admin)
    big = "x" * 5000  # over 4 KB as JSON
    near = "y" * 3900  # under 4 KB; 17 of them are over 64 KB
    refused = problem(
        _deploy(operator, flow_id, [[group]], context={"a": big}), 413, "context.value_too_large"
    )
    assert refused["params"]["name"] == "a" and refused["params"]["limit"] == 4096
    many = {f"p{i}": near for i in range(17)}
    problem(_deploy(operator, flow_id, [[group]], context=many), 422, "context.too_large")
    assert [d for d in admin.get("/deployments", params={"flow_id": flow_id}).json()["items"]] == []

    deployment = _deploy(operator, flow_id, [[group]], context={"site": "A"}).json()
    base = f"/deployments/{deployment['id']}"
    problem(
        operator.request("PUT", f"{base}/context/big", json={"value": big}),
        413,
        "context.value_too_large",
    )
    for index in range(16):
        put = operator.request("PUT", f"{base}/context/p{index}", json={"value": near})
        assert put.status_code == 200, put.text
    full = problem(
        operator.request("PUT", f"{base}/context/p16", json={"value": near}),
        422,
        "context.too_large",
    )
    assert full["params"]["limit"] == 65536
    # Replacing a value counts the new one instead of the old one.
    assert operator.request("PUT", f"{base}/context/p0", json={"value": "z"}).status_code == 200
    assert len(operator.get(f"{base}/context", params={"limit": 200}).json()["items"]) == 17
    # A deployment holding close to the bound is approved and rolled back as any other.
    assert _approve(approver, deployment["id"], 0)["status"] == "active"
    rolled = operator.post(f"{base}/rollback", json={})
    assert rolled.status_code == 200, rolled.text

    # The group's (and a Runner's) own context has the same bounds.
    problem(
        admin.request("PUT", f"/runner-groups/{group}/context/big", json={"value": big}),
        413,
        "context.value_too_large",
    )
    for index in range(16):
        put = admin.request("PUT", f"/runner-groups/{group}/context/p{index}", json={"value": near})
        assert put.status_code == 200, put.text
    problem(
        admin.request("PUT", f"/runner-groups/{group}/context/p16", json={"value": near}),
        422,
        "context.too_large",
    )


def test_list_deployments_refuses_an_unknown_status(admin: Api) -> None:
    refused = problem(
        admin.get("/deployments", params={"status": "sleeping"}), 422, "request.invalid"
    )
    assert "status" in str(refused["params"])
    assert admin.get("/deployments", params={"status": "rolled_back"}).status_code == 200


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


def _site(
    admin: Api, dev_server: DevServer, tmp_path: Path, group: str
) -> tuple[str, httpx.Client]:
    """An enrolled, online Runner of `group` (played by the test): its id and agent channel."""
    site = FakeSite(tmp_path, unique("site"))
    token = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={}).json()["token"]
    assert site.enroll(admin, token).status_code == 201
    agent = site.agent(dev_server)
    assert agent.post("/heartbeat", json={"hostname": "site-pc"}).status_code == 200
    return str(site.enrollment["runner_id"]), agent


def _printer(admin: Api, runner_id: str) -> str:
    response = admin.post(
        "/printers",
        json={
            "name": unique("dock"),
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9100",
            "language": "zpl",
            "dpi": 203,
        },
    )
    assert response.status_code == 201, response.text
    return str(response.json()["id"])


def _active(agent: httpx.Client, deployment_id: str) -> None:
    reported = agent.post(f"/deployments/{deployment_id}/status", json={"status": "active"})
    assert reported.status_code == 204, reported.text


def test_a_printer_a_deployment_assigns_is_not_deleted_and_a_lost_one_fails_only_its_flow(
    admin: Api, operator: Api, approver: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    group = _group(admin)
    runner_id, agent = _site(admin, dev_server, tmp_path, group)
    printer, override = _printer(admin, runner_id), _printer(admin, runner_id)
    printing, other = _flow(admin), _flow(admin)
    first = _deploy(operator, printing, [[group]], printers={"ship": printer}).json()
    _approve(approver, first["id"], 0)
    _active(agent, first["id"])
    plain = _deploy(operator, other, [[group]]).json()
    _approve(approver, plain["id"], 0)
    _active(agent, plain["id"])

    refused = problem(admin.delete(f"/printers/{printer}"), 409, "printer.in_use")
    assert refused["params"]["deployment_ids"] == [first["id"]]
    assert first["id"] in refused["detail"]
    assigned = operator.request(
        "PUT",
        f"/deployments/{first['id']}/printers/ship",
        json={"printer_id": printer, "by_runner": {runner_id: override}},
    )
    assert assigned.status_code == 200, assigned.text
    problem(admin.delete(f"/printers/{override}"), 409, "printer.in_use")
    listed = admin.get("/printers", params={"runner_id": runner_id}).json()["items"]
    assert {p["id"] for p in listed} == {printer, override}  # nothing was deleted

    # Version 2 prints nowhere and supersedes the first deployment: the printers are free.
    patched = admin.request(
        "PATCH",
        f"/flows/{printing}/document",
        json={"operations": [{"op": "replace", "path": "/nodes/1/message", "value": "'v2'"}]},
    )
    assert patched.status_code == 200, patched.text
    second = _deploy(operator, printing, [[group]], version=2).json()
    _approve(approver, second["id"], 0)
    _active(agent, second["id"])
    assert admin.get(f"/deployments/{first['id']}").json()["status"] == "superseded"
    assert admin.delete(f"/printers/{override}").status_code == 204
    assert admin.delete(f"/printers/{printer}").status_code == 204

    # Rolling back brings the first deployment back, whose printer is gone: that flow fails on
    # the Runner with the reason; the group's other flow is served as before.
    rolled = operator.post(f"/deployments/{second['id']}/rollback", json={})
    assert rolled.status_code == 200, rolled.text
    answer = agent.get("/flows")
    assert answer.status_code == 200, answer.text
    served = {item["flow_id"]: item for item in answer.json()}
    assert set(served) == {printing, other}
    assert served[other]["problems"] == [] and served[other]["deployment_id"] == plain["id"]
    lost = served[printing]
    assert lost["deployment_id"] == first["id"] and lost["printers"] == {}
    assert any(override in p and "ship" in p for p in lost["problems"]), lost["problems"]


def test_runners_of_the_targeted_groups_get_the_secrets_their_flow_names(
    admin: Api, operator: Api, approver: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    secret = "erp-" + unique("secret")
    ref = unique("erp")
    created = admin.post("/credentials", json={"ref": ref, "kind": "secret", "value": secret})
    assert created.status_code == 201, created.text
    unrelated = unique("other")
    admin.post("/credentials", json={"ref": unrelated, "kind": "secret", "value": "unrelated"})
    model = unique("model")
    admin.post(
        "/credentials",
        json={
            "ref": model,
            "kind": "language-model",
            "provider": "openai-chat",
            "model": "m",
            "endpoint": "http://127.0.0.1:9/v1",
        },
    )
    call = {
        "id": "call",
        "type": "action.http",
        "url": "https://erp.example.com/labels",
        "body": "record",
        "credential": ref,
    }
    document = {
        "nodes": [
            {"id": "in", "type": "trigger.http", "path": "hook", "wires": ["call"]},
            call,
        ]
    }
    flow_id = _flow(admin, document)
    here, there = _group(admin), _group(admin)
    _, agent_here = _site(admin, dev_server, tmp_path, here)
    _, agent_there = _site(admin, dev_server, tmp_path, there)
    deployment = _deploy(operator, flow_id, [[here], [there]]).json()
    assert agent_here.get("/flows").json() == []  # nothing before its stage is approved
    _approve(approver, deployment["id"], 0)
    (served,) = agent_here.get("/flows").json()
    assert served["credentials"] == {ref: secret} and served["problems"] == []
    assert agent_there.get("/flows").json() == []  # a group the deployment does not reach yet
    for text in (
        admin.get(f"/deployments/{deployment['id']}").text,
        admin.get(f"/flows/{flow_id}/document").text,
        admin.get("/credentials", params={"limit": 200}).text,
        admin.get("/audit-log", params={"limit": 200}).text,
        admin.post(f"/flows/{flow_id}/dry-run", json={"samples": [{"a": 1}]}).text,
    ):
        assert secret not in text

    # Naming a language model or a credential that does not exist fails the flow, with why.
    patched = admin.request(
        "PATCH",
        f"/flows/{flow_id}/document",
        json={
            "operations": [
                {
                    "op": "add",
                    "path": "/nodes/-",
                    "value": {**call, "id": "m", "credential": model},
                },
                {
                    "op": "add",
                    "path": "/nodes/-",
                    "value": {**call, "id": "x", "credential": "nope"},
                },
                {"op": "add", "path": "/nodes/1/wires", "value": ["m", "x"]},
            ]
        },
    )
    assert patched.status_code == 200, patched.text
    second = _deploy(operator, flow_id, [[here]], version=2).json()
    _approve(approver, second["id"], 0)
    (served,) = agent_here.get("/flows").json()
    assert served["version"] == 2 and served["credentials"] == {ref: secret}
    assert any(model in p and "not a secret" in p for p in served["problems"])
    assert any("'nope'" in p and "does not exist" in p for p in served["problems"])


def _audit(admin: Api, target: str) -> list[dict[str, Any]]:
    """The audit entries of a target, oldest first."""
    items = admin.get("/audit-log", params={"target": target, "limit": 200}).json()["items"]
    return list(reversed(items))


def test_automatic_steps_are_audited_with_the_runner_or_the_system_as_actor(
    admin: Api, operator: Api, approver: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    group = _group(admin)
    runner_id, agent = _site(admin, dev_server, tmp_path, group)
    flow_id = _flow(admin)
    first = _deploy(operator, flow_id, [[group]]).json()
    _approve(approver, first["id"], 0)
    for status in ("applying", "applying", "active"):  # the repeated report changes nothing
        reported = agent.post(f"/deployments/{first['id']}/status", json={"status": status})
        assert reported.status_code == 204, reported.text
    entries = _audit(admin, first["id"])
    assert [(e["operation_id"], e["actor"]) for e in entries] == [
        ("createDeployment", "human"),
        ("postDeploymentApproval", "human"),
        ("postRunnerDeploymentStatus", "service"),
        ("postRunnerDeploymentStatus", "service"),
        ("advanceDeployment", "system"),
    ]
    applying, active, advanced = entries[2:]
    assert applying["subject"] == f"runner:{runner_id}"
    assert applying["details"] == {"runner_id": runner_id, "status": "applying", "detail": None}
    assert active["details"]["status"] == "active"
    assert advanced["subject"] == "etikett"
    assert advanced["details"] == {
        "stage": 0,
        "stage_status": "active",
        "before": "rolling_out",
        "status": "active",
    }

    # A newer version supersedes the first deployment; rolling it back brings the first back.
    admin.request(
        "PATCH",
        f"/flows/{flow_id}/document",
        json={"operations": [{"op": "replace", "path": "/nodes/1/message", "value": "'v2'"}]},
    )
    second = _deploy(operator, flow_id, [[group]], version=2).json()
    _approve(approver, second["id"], 0)
    failed = agent.post(
        f"/deployments/{second['id']}/status", json={"status": "failed", "detail": "no folder"}
    )
    assert failed.status_code == 204
    stage_failed = _audit(admin, second["id"])[-1]
    assert (stage_failed["operation_id"], stage_failed["details"]["stage_status"]) == (
        "advanceDeployment",
        "failed",
    )
    agent.post(f"/deployments/{second['id']}/status", json={"status": "active"})
    superseded = _audit(admin, first["id"])[-1]
    assert (superseded["operation_id"], superseded["actor"]) == ("supersedeDeployment", "system")
    assert superseded["details"]["by"] == second["id"]
    operator.post(f"/deployments/{second['id']}/rollback", json={})
    revived = _audit(admin, first["id"])[-1]
    assert (revived["operation_id"], revived["actor"]) == ("reactivateDeployment", "system")
    assert revived["details"] == {"by_rollback_of": second["id"], "groups": [group]}


def test_a_deployment_too_wide_for_one_transaction_is_refused_not_a_500(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """A deployment is written in one transaction (at most 100 items): at most 50 groups and
    20 distinct printers per deployment, refused with 422 beyond, never a 500."""
    flow_id = _flow(admin)
    groups = [_group(admin) for _ in range(102)]  # 6 stages of 17: over 100 writes at once
    wide = [groups[i : i + 17] for i in range(0, 102, 17)]
    refused = problem(_deploy(operator, flow_id, wide), 422, "request.invalid")
    assert "50" in str(refused["params"])
    problem(_deploy(operator, flow_id, wide[:3]), 422, "request.invalid")  # 51 groups
    runner_id, _ = _site(admin, dev_server, tmp_path, groups[0])
    printers = [_printer(admin, runner_id) for _ in range(21)]
    many = {f"p{i}": printer for i, printer in enumerate(printers)}
    problem(_deploy(operator, flow_id, [groups[:2]], printers=many), 422, "request.invalid")
    deployment = _deploy(
        operator, flow_id, [groups[:2]], printers=dict(list(many.items())[:20])
    ).json()
    extra = operator.request(
        "PUT",
        f"/deployments/{deployment['id']}/printers/p0",
        json={"printer_id": printers[0], "by_runner": {runner_id: printers[20]}},
    )
    problem(extra, 422, "request.invalid")


def test_an_http_triggers_secret_reaches_only_the_runners_that_run_its_flow(
    admin: Api, operator: Api, approver: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """trigger.http's `secret` names a `secret` credential like action.http's `credential`:
    validated as a ref, never shown, delivered with the flow to its Runners only; one that does
    not exist fails the flow there (the Runner never opens the path without it)."""
    secret = "trigger-" + unique("secret")
    ref = unique("erp-in")
    created = admin.post("/credentials", json={"ref": ref, "kind": "secret", "value": secret})
    assert created.status_code == 201, created.text
    trigger = {"id": "in", "type": "trigger.http", "path": "orders", "secret": ref}
    log = {"id": "log", "type": "action.log", "message": "'got'"}
    flow_id = _flow(admin, {"nodes": [{**trigger, "wires": ["log"]}, log]})
    registry = admin.get("/flows/registry").json()["items"]
    fields = next(i["fields"] for i in registry if i["type"] == "trigger.http")
    assert fields["properties"]["secret"]["description"].startswith("Ref of a `secret`")
    here, there = _group(admin), _group(admin)
    _, agent_here = _site(admin, dev_server, tmp_path, here)
    _, agent_there = _site(admin, dev_server, tmp_path, there)
    deployment = _deploy(operator, flow_id, [[here]]).json()
    _approve(approver, deployment["id"], 0)
    (served,) = agent_here.get("/flows").json()
    assert served["credentials"] == {ref: secret} and served["problems"] == []
    assert agent_there.get("/flows").json() == []
    for text in (
        admin.get(f"/deployments/{deployment['id']}").text,
        admin.get(f"/flows/{flow_id}/document").text,
        admin.post(f"/flows/{flow_id}/dry-run", json={"samples": [{"a": 1}]}).text,
    ):
        assert secret not in text
    # Not a ref: a lint finding on the field. A ref to nothing: the flow fails on its Runners.
    patched = admin.request(
        "PATCH",
        f"/flows/{flow_id}/document",
        json={"operations": [{"op": "replace", "path": "/nodes/0/secret", "value": "no such"}]},
    )
    assert patched.status_code == 200, patched.text
    findings = [(f["code"], f["path"]) for f in patched.json()["findings"]]
    assert ("flow.field_invalid", "/nodes/0/secret") in findings
    gone = admin.request(
        "PATCH",
        f"/flows/{flow_id}/document",
        json={"operations": [{"op": "replace", "path": "/nodes/0/secret", "value": "gone"}]},
    )
    assert gone.status_code == 200 and gone.json()["findings"] == [], gone.text
    third = _deploy(operator, flow_id, [[here]], version=3).json()
    _approve(approver, third["id"], 0)
    (served,) = agent_here.get("/flows").json()
    assert served["version"] == 3 and served["credentials"] == {}
    assert any("'gone'" in p and "does not exist" in p for p in served["problems"])


def test_a_secret_goes_only_to_the_origins_it_names(
    admin: Api, operator: Api, approver: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """Issue 23, item 5: origins are stored in normal form; lint refuses a flow that sends the
    secret elsewhere (and warns of a secret without origins); such a version is not deployed;
    and a secret narrowed after a deployment is withheld from its Runners, with why."""
    ref = unique("erp")
    bad = admin.post(
        "/credentials",
        json={
            "ref": ref,
            "kind": "secret",
            "value": "x",
            "origins": ["https://erp.example.com/api"],
        },
    )
    fields = problem(bad, 422, "request.invalid")["params"]["fields"]
    assert fields[0]["field"] == "body.secret.origins" and "no path" in fields[0]["message"]
    created = admin.post(
        "/credentials",
        json={
            "ref": ref,
            "kind": "secret",
            "value": "erp-" + unique("secret"),
            "origins": ["HTTPS://ERP.example.com:443", "https://erp.example.com"],
        },
    )
    assert created.status_code == 201, created.text
    assert created.json()["origins"] == ["https://erp.example.com"]
    listed = admin.get("/credentials", params={"limit": 200}).json()["items"]
    assert next(c for c in listed if c["ref"] == ref)["origins"] == ["https://erp.example.com"]

    def document(url: str, credential: str) -> dict[str, Any]:
        return {
            "nodes": [
                {"id": "in", "type": "trigger.http", "path": "hook", "wires": ["call"]},
                {"id": "call", "type": "action.http", "url": url, "credential": credential},
            ]
        }

    elsewhere = _flow(admin, document("https://erp.example.com.evil.net/x", ref))
    findings = admin.post(f"/flows/{elsewhere}/lint", json={}).json()["findings"]
    assert [(f["code"], f["severity"], f["path"]) for f in findings] == [
        ("flow.credential_origin_refused", "error", "/nodes/1/url")
    ]
    group = _group(admin)
    refused = problem(_deploy(operator, elsewhere, [[group]]), 422, "deployment.flow_has_errors")
    assert refused["params"]["findings"][0]["code"] == "flow.credential_origin_refused"

    # A secret without origins: deployed as before, with a warning.
    unbound = unique("open")
    admin.post("/credentials", json={"ref": unbound, "kind": "secret", "value": "open-secret"})
    flow_id = _flow(admin, document("https://erp.example.com/labels", unbound))
    (warning,) = admin.get(f"/flows/{flow_id}/document").json()["findings"]
    assert (warning["code"], warning["severity"]) == ("flow.credential_unbound", "warning")
    _, agent = _site(admin, dev_server, tmp_path, group)
    deployment = _deploy(operator, flow_id, [[group]]).json()
    _approve(approver, deployment["id"], 0)
    (served,) = agent.get("/flows").json()
    assert served["credentials"] == {unbound: "open-secret"}
    assert served["credential_origins"] == {}

    # Re-made with origins elsewhere: the Runners no longer get it, and say why.
    assert admin.delete(f"/credentials/{unbound}").status_code == 204
    remade = admin.post(
        "/credentials",
        json={
            "ref": unbound,
            "kind": "secret",
            "value": "open-secret",
            "origins": ["https://other.example.com"],
        },
    )
    assert remade.status_code == 201, remade.text
    (served,) = agent.get("/flows").json()
    assert served["credentials"] == {} and "open-secret" not in str(served)
    assert any("https://erp.example.com" in p and unbound in p for p in served["problems"])
    # Bound where the flow sends it: delivered, with its origins for the Runner to enforce.
    assert admin.delete(f"/credentials/{unbound}").status_code == 204
    admin.post(
        "/credentials",
        json={
            "ref": unbound,
            "kind": "secret",
            "value": "open-secret",
            "origins": ["https://erp.example.com"],
        },
    )
    (served,) = agent.get("/flows").json()
    assert served["credentials"] == {unbound: "open-secret"} and served["problems"] == []
    assert served["credential_origins"] == {unbound: ["https://erp.example.com"]}


def _policy(admin: Api, enabled: bool) -> None:
    response = admin.request(
        "PUT", "/policies/deploymentChangesNeedApproval", json={"enabled": enabled}
    )
    assert response.status_code == 200, response.text


def test_changes_after_approval_are_audited_and_shown_and_may_wait_for_a_new_approval(
    admin: Api,
    operator: Api,
    approver: Api,
    agent_approver: Api,
    dev_server: DevServer,
    tmp_path: Path,
) -> None:
    """Issue 23, item 5: a deployment's context or printers changed after a stage's approval
    is audited and shown as changed since approval; with `deploymentChangesNeedApproval` on,
    the stage's Runners keep what they ran until a person approves the stage again."""
    group = _group(admin)
    runner_id, agent = _site(admin, dev_server, tmp_path, group)
    first, second = _printer(admin, runner_id), _printer(admin, runner_id)
    names = {
        p["id"]: p["name"] for p in admin.get("/printers", params={"limit": 200}).json()["items"]
    }
    flow_id = _flow(admin)
    created = _deploy(
        operator, flow_id, [[group]], printers={"ship": first}, context={"site": "Hall 1"}
    ).json()
    deployment = created["id"]
    _approve(approver, deployment, 0)
    _active(agent, deployment)
    before = admin.get(f"/deployments/{deployment}").json()
    assert before["stages"][0]["status"] == "active"
    assert before["changed_since_approval"] is False
    assert before["stages"][0]["changed_since_approval"] is False

    # Policy off (the default): the change reaches the Runner at once, and is shown and audited.
    put = operator.request(
        "PUT", f"/deployments/{deployment}/context/site", json={"value": "Hall 2"}
    )
    assert put.status_code == 200, put.text
    shown = admin.get(f"/deployments/{deployment}").json()
    assert shown["changed_since_approval"] is True
    assert shown["stages"][0]["changed_since_approval"] is True
    assert shown["stages"][0]["changes_await_approval"] is False
    (served,) = agent.get("/flows").json()
    assert served["context"]["site"] == "Hall 2"
    entry = next(
        e
        for e in _audit(admin, deployment)[::-1]
        if e["operation_id"] == "putDeploymentContextParameter"
    )
    assert entry["details"]["after_approval"] is True and entry["details"]["stages"] == [0]
    assert "awaits_approval" not in entry["details"]
    # Approving the stage again approves what it runs now.
    again = _approve(approver, deployment, 0)
    assert again["changed_since_approval"] is False and again["stages"][0]["status"] == "active"
    problem(
        approver.post(f"/deployments/{deployment}/approval", json={"stage": 0}),
        409,
        "deployment.stage_not_awaiting",
    )

    # Policy on: only an admin in a session switches it.
    problem(
        admin.as_token(admin.service_token("admin")["token"]).request(
            "PUT", "/policies/deploymentChangesNeedApproval", json={"enabled": True}
        ),
        403,
        "auth.human_required",
    )
    _policy(admin, True)
    try:
        for path, body in (
            (f"/deployments/{deployment}/context/site", {"value": "Hall 3"}),
            (f"/deployments/{deployment}/printers/ship", {"printer_id": second}),
        ):
            changed = operator.request("PUT", path, json=body)
            assert changed.status_code == 200, changed.text
        shown = admin.get(f"/deployments/{deployment}").json()
        assert shown["stages"][0]["changes_await_approval"] is True
        assert shown["changed_since_approval"] is True
        # The Runner still gets what it ran: Hall 2, the first printer.
        (served,) = agent.get("/flows").json()
        assert served["context"]["site"] == "Hall 2"
        assert served["printers"] == {"ship": names[first]}
        # The configuration readers see is the changed one, marked as waiting.
        assert (
            admin.get(f"/deployments/{deployment}/context").json()["items"][0]["value"] == "Hall 3"
        )
        entries = [
            e for e in _audit(admin, deployment) if e["operation_id"] == "putDeploymentPrinter"
        ]
        assert entries[-1]["details"]["awaits_approval"] == [0]
        # An agent may not approve it while aiFreigabePflicht is on; a person may.
        problem(
            agent_approver.post(f"/deployments/{deployment}/approval", json={"stage": 0}),
            403,
            "policy.human_required",
        )
        released = _approve(approver, deployment, 0)
        assert released["stages"][0]["changes_await_approval"] is False
        assert released["changed_since_approval"] is False
        (served,) = agent.get("/flows").json()
        assert served["context"]["site"] == "Hall 3"
        assert served["printers"] == {"ship": names[second]}
        reapproval = _audit(admin, deployment)[-1]
        assert reapproval["operation_id"] == "postDeploymentApproval"
        assert reapproval["details"]["released"] is True and reapproval["details"]["changes"]
    finally:
        _policy(admin, False)
