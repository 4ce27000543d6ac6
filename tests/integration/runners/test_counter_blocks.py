"""Counter blocks (postRunnerCounterBlock, the agent channel): two Runners of one group reserving
blocks of one counter while operators print with it never share a value; a block is one atomic
DynamoDB transaction with its audit entry on the counter; a retry by the block's id returns the
block it got; only counters the group's deployed flows read can be reserved."""

from __future__ import annotations

import secrets
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer


def _block_id() -> str:
    return f"blk_{secrets.token_hex(8)}"


def _label(admin: Api, counter: str) -> str:
    """A released label with a Code 128 of the counter's value."""
    label = admin.post(
        "/labels/from-dimensions", json={"name": unique("blocks"), "width_mm": 60, "height_mm": 30}
    ).json()
    document = {
        "size": {"width_mm": 60, "height_mm": 30},
        "dpi": 203,
        "objects": [
            {
                "id": "serial",
                "type": "barcode",
                "symbology": "code128",
                "x_mm": 2,
                "y_mm": 2,
                "height_mm": 10,
                "expression": f"counters.{counter}",
            }
        ],
    }
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
    return str(label["id"])


def _runner(admin: Api, dev_server: DevServer, folder: Path, group: str) -> tuple[str, Any]:
    token = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={}).json()["token"]
    site = FakeSite(folder, unique("site"))
    assert site.enroll(admin, token).status_code == 201
    agent = site.agent(dev_server)
    assert agent.post("/heartbeat", json={"hostname": "site-pc"}).status_code == 200
    return str(site.enrollment["runner_id"]), agent


@pytest.fixture(scope="module")
def hall(admin: Api, dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A group with two Runners running a flow whose label reads the counter, a printer, and a
    Runner of another group."""
    folder = tmp_path_factory.mktemp("blocks")
    counter = unique("serial").replace("-", "_")
    made = admin.post("/counters", json={"name": counter, "start": 1, "format": "000000"})
    assert made.status_code == 201, made.text
    label = _label(admin, counter)
    group = admin.post("/runner-groups", json={"name": unique("hall")}).json()["id"]
    a, agent_a = _runner(admin, dev_server, folder, group)
    _, agent_b = _runner(admin, dev_server, folder, group)
    other = admin.post("/runner-groups", json={"name": unique("other")}).json()["id"]
    _, agent_c = _runner(admin, dev_server, folder, other)
    printer = admin.post(
        "/printers",
        json={
            "name": unique("dock"),
            "runner_id": a,
            "uri": "tcp://127.0.0.1:9",
            "language": "zpl",
            "dpi": 203,
        },
    ).json()
    document = {
        "nodes": [
            {"id": "in", "type": "trigger.http", "path": unique("orders"), "wires": ["ship"]},
            {"id": "ship", "type": "action.print", "label": label, "printer": "ship"},
        ]
    }
    flow = admin.post("/flows", json={"name": unique("flow"), "document": document}).json()
    created = admin.post(
        "/deployments",
        json={
            "flow_id": flow["id"],
            "version": 1,
            "stages": [{"group_ids": [group]}],
            "printers": {"ship": printer["id"]},
        },
    )
    assert created.status_code == 201, created.text
    approved = admin.post(f"/deployments/{created.json()['id']}/approval", json={"stage": 0})
    assert approved.status_code == 200, approved.text
    return counter, label, printer["name"], agent_a, agent_b, agent_c


def _reserve(agent: httpx.Client, counter: str, size: int, block_id: str | None = None) -> Any:
    return agent.post(
        "/counter-blocks",
        json={"block_id": block_id or _block_id(), "counter": counter, "size": size},
    )


def _values(block: dict[str, Any]) -> set[int]:
    return {block["first"] + block["step"] * i for i in range(block["size"])}


def test_two_runners_and_cloud_prints_never_share_a_value(admin: Api, hall: Any) -> None:
    counter, label, printer, agent_a, agent_b, _ = hall
    operator = admin.user_session(["operator"])[1]

    def reserve(agent: httpx.Client) -> dict[str, Any]:
        answer = _reserve(agent, counter, 7)
        assert answer.status_code == 200, answer.text
        return dict(answer.json())

    def cloud_print(_: int) -> list[int]:
        answer = operator.post(
            "/print", json={"label_id": label, "printer": printer, "data": [{}, {}, {}]}
        )
        assert answer.status_code == 202, answer.text
        ids = answer.json()["archive_entry_ids"]
        return [int(operator.get(f"/print-archive/{i}").json()["serials"][counter]) for i in ids]

    with ThreadPoolExecutor(6) as pool:  # reservations and prints interleaved
        reserving = [pool.submit(reserve, agent) for agent in [agent_a, agent_b] * 6]
        printing = [pool.submit(cloud_print, i) for i in range(6)]
        blocks = [f.result() for f in reserving]
        printed = [v for f in printing for v in f.result()]
    taken = [v for block in blocks for v in sorted(_values(block))] + printed
    assert len(taken) == 12 * 7 + 6 * 3
    assert len(set(taken)) == len(taken), "a value was handed out twice"
    assert sorted(taken) == list(range(1, len(taken) + 1))  # and none was lost
    assert admin.get(f"/counters/{counter}").json()["issued"] == len(taken)

    # Each block is audited on the counter, with the Runner and its values.
    search = {"target": counter, "operation": "postRunnerCounterBlock", "limit": 100}
    entries = admin.get("/audit-log", params=search).json()["items"]
    assert {e["details"]["block_id"] for e in entries} == {b["block_id"] for b in blocks}


def test_a_retry_returns_the_block_it_got_and_foreign_counters_are_refused(
    admin: Api, hall: Any
) -> None:
    counter, _, _, agent_a, agent_b, agent_c = hall
    block_id = _block_id()
    first = _reserve(agent_a, counter, 5, block_id).json()
    again = _reserve(agent_a, counter, 5, block_id)
    assert again.status_code == 200 and again.json() == first
    problem(_reserve(agent_b, counter, 5, block_id), 409, "resource.conflict")  # A's id
    problem(_reserve(agent_c, counter, 5), 403, "runner.counter_not_in_flow")  # other group
    problem(_reserve(agent_a, "not_read_by_the_flow", 5), 403, "runner.counter_not_in_flow")
    problem(_reserve(agent_a, counter, 10_001), 422, "request.invalid")
    assert admin.get(f"/counters/{counter}").json()["current"] == first["first"] + 4
