"""A deployment's offline policy (off unless set; bounded; audited; in each Runner's signed
bundle), and what a Runner reports of its offline prints on getRunner."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer

DOCUMENT = {
    "nodes": [
        {"id": "in", "type": "trigger.schedule", "every_s": 60, "wires": ["log"]},
        {"id": "log", "type": "action.log", "message": "context.site"},
    ]
}
OFF = {"allowed": False, "max_hours": 8, "max_labels": 1000, "counter_block_size": 100}


def _created(response: Any) -> dict[str, Any]:
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_the_offline_policy_is_off_by_default_bounded_audited_and_signed_into_the_bundle(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    operator = admin.user_session(["operator"])[1]
    group = _created(admin.post("/runner-groups", json={"name": unique("site")}))["id"]
    flow = _created(admin.post("/flows", json={"name": unique("off"), "document": DOCUMENT}))
    site = FakeSite(tmp_path, unique("site"))
    token = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={}).json()["token"]
    assert site.enroll(admin, token).status_code == 201
    agent = site.agent(dev_server)

    def deploy(**extra: Any) -> Any:
        body = {"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [group]}]}
        return operator.post("/deployments", json={**body, **extra})

    for bad in ({"max_hours": 0}, {"max_hours": 169}, {"max_labels": -1}, {"allowed": "yes"}):
        problem(deploy(offline=bad), 422, "request.invalid")
    problem(deploy(offline={"allowed": True, "forever": True}), 422, "request.invalid")
    deployment = _created(deploy())
    assert deployment["offline"] == OFF
    path = f"/deployments/{deployment['id']}/offline-policy"
    allowed = {"allowed": True, "max_hours": 24, "max_labels": 5000, "counter_block_size": 250}
    designer = admin.as_token(admin.service_token("designer")["token"])
    problem(designer.request("PUT", path, json=allowed), 403, "auth.forbidden")
    too_many = {**allowed, "max_labels": 100_001}
    problem(operator.request("PUT", path, json=too_many), 422, "request.invalid")
    unknown = "/deployments/dep_nope/offline-policy"
    problem(operator.request("PUT", unknown, json=allowed), 404, "deployment.not_found")
    assert admin.get(f"/deployments/{deployment['id']}").json()["offline"] == OFF
    answer = operator.request("PUT", path, json=allowed)
    assert answer.status_code == 200, answer.text
    assert answer.json() == allowed
    assert admin.get(f"/deployments/{deployment['id']}").json()["offline"] == allowed
    items = admin.get("/audit-log", params={"target": deployment["id"], "limit": 50}).json()
    entries = [e for e in items["items"] if e["operation_id"] == "putDeploymentOfflinePolicy"]
    (entry,) = [e for e in entries if e["outcome"] == "success"]
    assert entry["details"] == {"before": OFF, "after": allowed}
    assert {e["code"] for e in entries} == {None, "auth.forbidden", "request.invalid"}

    # The Runner gets the policy inside what the service signed.
    approver = admin.user_session(["approver"])[1]
    approved = approver.post(f"/deployments/{deployment['id']}/approval", json={"stage": 0})
    assert approved.status_code == 200, approved.text
    (served,) = agent.get("/flows").json()
    payload = json.loads(base64.b64decode(served["bundle"]["payload"]))
    assert payload["offline"] == allowed


def test_get_runner_shows_since_when_and_what_it_has_not_synced(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    group = _created(admin.post("/runner-groups", json={"name": unique("site")}))["id"]
    site = FakeSite(tmp_path, unique("site"))
    token = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={}).json()["token"]
    assert site.enroll(admin, token).status_code == 201
    agent = site.agent(dev_server)
    runner_id = site.enrollment["runner_id"]
    before = admin.get(f"/runners/{runner_id}").json()
    assert before["status"] == "offline" and before["status_since"] is None  # never seen
    assert before["unsynced_offline_labels"] == 0 and before["oldest_unsynced_at"] is None

    assert agent.post("/heartbeat", json={}).status_code == 200
    online = admin.get(f"/runners/{runner_id}").json()
    assert online["status"] == "online" and online["status_since"] == online["last_seen_at"]

    report = {"unsynced_labels": 37, "oldest_unsynced_at": "2026-11-27T06:00:00Z"}
    assert agent.post("/heartbeat", json={"offline": report}).status_code == 200
    seen = admin.get(f"/runners/{runner_id}").json()
    assert seen["status_since"] == online["status_since"]  # still the same stretch online
    assert seen["unsynced_offline_labels"] == 37
    assert seen["oldest_unsynced_at"].startswith("2026-11-27T06:00:00")
    listed = admin.get("/runners", params={"group_id": group}).json()["items"]
    assert [r["unsynced_offline_labels"] for r in listed] == [37]
    for bad in ({"unsynced_labels": -1}, {"oldest_unsynced_at": "yesterday"}, {"x": 1}):
        problem(agent.post("/heartbeat", json={"offline": bad}), 422, "request.invalid")
