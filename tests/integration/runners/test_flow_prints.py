"""A Runner's flow prints (postRunnerFlowPrint, the agent channel) are held to its deployed flow
(issue 23, item 7): only while its group runs the deployment, and only labels, label versions
and printer aliases that the deployed version's action.print nodes name. Anything else is 403
with a clear code and an audit entry of the refusal; nothing is printed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer

LABEL = {
    "size": {"width_mm": 60, "height_mm": 30},
    "dpi": 203,
    "variables": [{"name": "name", "type": "string", "required": True}],
    "objects": [
        {"id": "t", "type": "text", "x_mm": 2, "y_mm": 2, "size_pt": 10, "expression": "name"}
    ],
}


def _released_label(admin: Api) -> str:
    """A label whose version 2 is approved (released) and version 3 a draft."""
    label = admin.post(
        "/labels/from-dimensions",
        json={"name": unique("flowprint"), "width_mm": 60, "height_mm": 30},
    ).json()
    for version, value in ((2, LABEL), (3, {**LABEL, "dpi": 203})):
        patched = admin.request(
            "PATCH",
            f"/labels/{label['id']}/document",
            json={"operations": [{"op": "replace", "path": "", "value": value}]},
        )
        assert patched.status_code == 200, patched.text
        if version == 2:
            approved = admin.post(
                f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"}
            )
            assert approved.status_code == 200, approved.text
    return str(label["id"])


@pytest.fixture(scope="module")
def site(admin: Api, dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A group with an enrolled, online Runner and a printer of its own."""
    group = admin.post("/runner-groups", json={"name": unique("hall")}).json()["id"]
    token = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={}).json()["token"]
    runner = FakeSite(tmp_path_factory.mktemp("flowprints"), unique("site"))
    assert runner.enroll(admin, token).status_code == 201
    agent = runner.agent(dev_server)
    assert agent.post("/heartbeat", json={"hostname": "site-pc"}).status_code == 200
    printer = admin.post(
        "/printers",
        json={
            "name": unique("dock"),
            "runner_id": runner.enrollment["runner_id"],
            "uri": "tcp://127.0.0.1:9",
            "language": "zpl",
            "dpi": 203,
        },
    ).json()
    return group, runner.enrollment["runner_id"], agent, printer["id"]


def _print(agent: httpx.Client, deployment_id: str, label: str, alias: str = "ship") -> Any:
    return agent.post(
        "/flow-prints",
        json={
            "deployment_id": deployment_id,
            "printer": alias,
            "label": label,
            "copies": 1,
            "records": [{"name": "Ada"}],
            "idempotency_key": unique("event"),
        },
    )


def test_a_runner_prints_only_what_its_running_deployment_names(
    admin: Api, site: Any, tmp_path: Path
) -> None:
    group, runner_id, agent, printer = site
    label, other = _released_label(admin), _released_label(admin)
    document = {
        "nodes": [
            {"id": "in", "type": "trigger.http", "path": unique("orders"), "wires": ["ship"]},
            {
                "id": "ship",
                "type": "action.print",
                "label": f"{label}@2",
                "printer": "ship",
                "variables": {"name": "record.name"},
            },
        ]
    }
    flow = admin.post("/flows", json={"name": unique("flow"), "document": document}).json()
    created = admin.post(
        "/deployments",
        json={
            "flow_id": flow["id"],
            "version": 1,
            "stages": [{"group_ids": [group]}],
            "printers": {"ship": printer, "spare": printer},
        },
    )
    assert created.status_code == 201, created.text
    deployment = created.json()["id"]

    # Not approved yet: the group does not run it.
    refused = problem(_print(agent, deployment, f"{label}@2"), 403, "runner.deployment_not_running")
    assert refused["params"]["deployment_id"] == deployment

    approved = admin.post(f"/deployments/{deployment}/approval", json={"stage": 0})
    assert approved.status_code == 200, approved.text
    assert _print(agent, deployment, f"{label}@2").status_code == 202  # what the flow names

    # Another label, another version of the flow's label (or its released one by plain id),
    # an alias the deployment assigns but the flow never prints to: refused.
    for wrong, alias in (
        (other, "ship"),
        (f"{other}@2", "ship"),
        (f"{label}@3", "ship"),
        (label, "ship"),
        (f"{label}@2", "spare"),
    ):
        refused = problem(_print(agent, deployment, wrong, alias), 403, "runner.print_not_in_flow")
        assert (refused["params"]["label"], refused["params"]["printer"]) == (wrong, alias)

    # Rolled back: no more prints for it.
    rolled = admin.post(f"/deployments/{deployment}/rollback", json={})
    assert rolled.status_code == 200, rolled.text
    problem(_print(agent, deployment, f"{label}@2"), 403, "runner.deployment_not_running")

    # Every refusal is audited against the deployment, by the Runner.
    trail = admin.get("/audit-log", params={"target": deployment, "limit": 100}).json()["items"]
    refusals = [
        e["code"]
        for e in trail
        if e["operation_id"] == "postRunnerFlowPrint" and e["outcome"] == "refused"
    ]
    assert sorted(refusals) == sorted(
        ["runner.deployment_not_running"] * 2 + ["runner.print_not_in_flow"] * 5
    )
    assert {e["subject"] for e in trail if e["operation_id"] == "postRunnerFlowPrint"} == {
        f"runner:{runner_id}"
    }
    # One print went through: one job, on the Runner's printer.
    jobs = admin.get(f"/runners/{runner_id}/jobs").json()["items"]
    assert len([j for j in jobs if j["kind"] == "print"]) == 1


def test_a_runner_of_another_group_cannot_print_for_the_deployment(
    admin: Api, site: Any, dev_server: DevServer, tmp_path: Path
) -> None:
    group, _, agent, printer = site
    label = _released_label(admin)
    document = {
        "nodes": [
            {"id": "in", "type": "trigger.http", "path": unique("orders"), "wires": ["ship"]},
            {
                "id": "ship",
                "type": "action.print",
                "label": label,
                "printer": "ship",
                "variables": {"name": "record.name"},
            },
        ]
    }
    flow = admin.post("/flows", json={"name": unique("flow"), "document": document}).json()
    deployment = admin.post(
        "/deployments",
        json={
            "flow_id": flow["id"],
            "version": 1,
            "stages": [{"group_ids": [group]}],
            "printers": {"ship": printer},
        },
    ).json()["id"]
    assert admin.post(f"/deployments/{deployment}/approval", json={"stage": 0}).status_code == 200
    elsewhere = admin.post("/runner-groups", json={"name": unique("other")}).json()["id"]
    token = admin.post(f"/runner-groups/{elsewhere}/enrollment-tokens", json={}).json()["token"]
    stranger = FakeSite(tmp_path, unique("stranger"))
    assert stranger.enroll(admin, token).status_code == 201
    problem(_print(stranger.agent(dev_server), deployment, label), 403, "auth.forbidden")
    assert _print(agent, deployment, label).status_code == 202
