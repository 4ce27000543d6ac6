"""Only a person makes a Runner (issue 23, item 1): an admin *service token* — an agent, or a
stolen token — cannot issue an enrollment token, build an installer (which carries one) or
approve a waiting enrollment, on REST or through MCP. Otherwise it could enroll a Runner of its
own into a group that runs a flow and receive that flow's secrets over the agent channel."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from integration.mcp.client import RawMcp
from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer

HUMAN_ONLY = {
    "createEnrollmentToken": ("POST", "/runner-groups/{group}/enrollment-tokens"),
    "postRunnerGroupInstaller": ("POST", "/runner-groups/{group}/installer"),
    "postRunnerEnrollmentApproval": ("POST", "/runner-enrollments/{enrollment}/approval"),
}


def _group_running_a_secret(admin: Api) -> tuple[str, str]:
    """A group whose approved deployment runs a flow that names a secret: (group id, secret)."""
    secret, ref = "erp-" + unique("secret"), unique("erp")
    created = admin.post("/credentials", json={"ref": ref, "kind": "secret", "value": secret})
    assert created.status_code == 201, created.text
    document = {
        "nodes": [
            {"id": "in", "type": "trigger.http", "path": "orders", "wires": ["call"]},
            {
                "id": "call",
                "type": "action.http",
                "url": "https://erp.example.com/labels",
                "credential": ref,
            },
        ]
    }
    flow = admin.post("/flows", json={"name": unique("erp"), "document": document}).json()
    group = admin.post("/runner-groups", json={"name": unique("hall")}).json()["id"]
    deployment = admin.post(
        "/deployments",
        json={"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [group]}]},
    ).json()
    approved = admin.post(f"/deployments/{deployment['id']}/approval", json={"stage": 0})
    assert approved.status_code == 200, approved.text
    return group, secret


def _mcp_problem(url: str, token: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    response = RawMcp(url, token).post("tools/call", {"name": name, "arguments": arguments})
    assert response.status_code == 200, response.text
    result = response.json()["result"]
    assert result["isError"] is True, result
    return dict(json.loads(result["content"][0]["text"]))


def test_an_admin_service_token_cannot_get_a_runner_of_its_own_into_a_group(
    admin: Api, anonymous: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    group, secret = _group_running_a_secret(admin)
    token = admin.service_token("admin")
    agent = admin.as_token(token["token"])

    # Neither an enrollment token nor an installer (it carries a fresh one).
    for name in ("createEnrollmentToken", "postRunnerGroupInstaller"):
        path = HUMAN_ONLY[name][1].format(group=group)
        refused = problem(agent.post(path, json={}), 403, "auth.human_required")
        assert refused["params"]["operation_id"] == name

    # A Runner that enrolled with a token a person issued (needs approval) stays waiting.
    issued = admin.post(
        f"/runner-groups/{group}/enrollment-tokens", json={"needs_approval": True}
    ).json()
    site = FakeSite(tmp_path, unique("intruder"))
    assert site.enroll(anonymous, issued["token"]).status_code == 201
    enrollment = site.enrollment
    assert enrollment["status"] == "pending" and enrollment["certificate_pem"] is None
    path = HUMAN_ONLY["postRunnerEnrollmentApproval"][1].format(enrollment=enrollment["id"])
    problem(agent.post(path), 403, "auth.human_required")

    # Through MCP alike: none of the three is a tool, and a call says a person must do it.
    url = f"{dev_server.url}/mcp"
    listed = RawMcp(url, token["token"]).post("tools/list", {}).json()["result"]["tools"]
    assert not {tool["name"] for tool in listed} & set(HUMAN_ONLY)
    for name, arguments in (
        ("createEnrollmentToken", {"groupId": group, "body": {}}),
        ("postRunnerGroupInstaller", {"groupId": group, "body": {}}),
        ("postRunnerEnrollmentApproval", {"id": enrollment["id"]}),
    ):
        refused = _mcp_problem(url, token["token"], name, arguments)
        assert refused["code"] == "auth.human_required", refused
        assert refused["status"] == 403 and refused["params"]["operation_id"] == name

    # Nothing was issued or approved: the enrollment still waits, and the intruder's Runner
    # gets no certificate, so it never reaches the agent channel or the flow's secret.
    state = admin.get(f"/runner-enrollments/{enrollment['id']}").json()
    assert state["status"] == "pending" and state["certificate_pem"] is None
    polled = anonymous.get(
        f"/runner-enrollments/{enrollment['id']}",
        token="",
        headers={"X-Enrollment-Secret": enrollment["secret"]},
    ).json()
    assert polled["certificate_pem"] is None and secret not in json.dumps(polled)

    # Each refusal is in the audit log, under the token's subject.
    entries = admin.get("/audit-log", params={"actor": token["subject"], "limit": 50}).json()[
        "items"
    ]
    refusals = [(e["operation_id"], e["outcome"], e["code"]) for e in entries]
    for name in HUMAN_ONLY:
        assert (name, "refused", "auth.human_required") in refusals, refusals


def test_a_person_still_enrolls_and_approves(admin: Api, anonymous: Api, tmp_path: Path) -> None:
    """The same three steps by an admin signed in with a session work as before."""
    group = admin.post("/runner-groups", json={"name": unique("hall")}).json()["id"]
    issued = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={"needs_approval": True})
    assert issued.status_code == 201, issued.text
    site = FakeSite(tmp_path, unique("runner"))
    assert site.enroll(anonymous, issued.json()["token"]).status_code == 201
    approved = admin.post(f"/runner-enrollments/{site.enrollment['id']}/approval")
    assert approved.status_code == 200 and approved.json()["certificate_pem"], approved.text
