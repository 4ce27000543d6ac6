"""A site for the offline-sync tests and benchmark: a label printing a counter's value, Runners
enrolled with their certificates, a printer, a deployment that may print offline, counter blocks,
and offline prints as a Runner's journal holds them."""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import httpx
from etikett_runner.offline_prints import OfflinePrint, OfflineRecord, new_print_id

from support.client import Api, unique
from support.runner_site import FakeSite
from support.server import DevServer


def label_with_counter(admin: Api, counter: str) -> str:
    """A label whose version 2 (approved, released) prints a name and the counter's value."""
    label = admin.post(
        "/labels/from-dimensions", json={"name": unique("offline"), "width_mm": 60, "height_mm": 30}
    ).json()
    document = {
        "size": {"width_mm": 60, "height_mm": 30},
        "dpi": 203,
        "variables": [{"name": "name", "type": "string"}],
        "objects": [
            {"id": "t", "type": "text", "x_mm": 2, "y_mm": 2, "size_pt": 10, "expression": "name"},
            {
                "id": "serial",
                "type": "barcode",
                "symbology": "code128",
                "x_mm": 2,
                "y_mm": 12,
                "height_mm": 10,
                "expression": f"counters.{counter}",
            },
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


def enroll(
    admin: Api, dev_server: DevServer, folder: Path, group: str
) -> tuple[str, httpx.Client, FakeSite]:
    """A Runner of `group`: its id, its agent channel (a heartbeat sent: online) and its site,
    whose folder holds its certificate and key (cert.pem, key.pem) for a Runner's own channel."""
    token = admin.post(f"/runner-groups/{group}/enrollment-tokens", json={}).json()["token"]
    site = FakeSite(folder, unique("site"))
    assert site.enroll(admin, token).status_code == 201
    agent = site.agent(dev_server)
    assert agent.post("/heartbeat", json={"hostname": "site-pc"}).status_code == 200
    return str(site.enrollment["runner_id"]), agent, site


def deploy(admin: Api, label: str, group: str, printer_id: str) -> dict[str, Any]:
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
            "printers": {"ship": printer_id},
            "offline": {"allowed": True},
        },
    )
    assert created.status_code == 201, created.text
    approved = admin.post(f"/deployments/{created.json()['id']}/approval", json={"stage": 0})
    assert approved.status_code == 200, approved.text
    return dict(created.json())


def printer_of(admin: Api, runner_id: str) -> dict[str, Any]:
    made = admin.post(
        "/printers",
        json={
            "name": unique("dock"),
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9",
            "language": "zpl",
            "dpi": 203,
        },
    )
    assert made.status_code == 201, made.text
    return dict(made.json())


def reserve(agent: httpx.Client, counter: str, size: int) -> dict[str, Any]:
    answer = agent.post(
        "/counter-blocks",
        json={"block_id": f"blk_{secrets.token_hex(8)}", "counter": counter, "size": size},
    )
    assert answer.status_code == 200, answer.text
    return dict(answer.json())


def offline_print(hall: dict[str, Any], values: list[int], **changes: Any) -> OfflinePrint:
    """An offline print as the Runner journals it, one record per counter value, for the
    deployment, label, printer and counter that `hall` names."""
    counter, deployment = hall["counter"], hall["deployment"]
    taken = OfflinePrint(
        id=new_print_id(),
        run_id=f"run-{secrets.token_hex(4)}",
        deployment_id=deployment["id"],
        flow_id=deployment["flow_id"],
        flow_version=1,
        label_id=hall["label"],
        label_version=2,
        printer="ship",
        printer_id=hall["printer"]["id"],
        copies=1,
        records=[
            OfflineRecord(
                variables={"name": f"crate {value}"},
                serials={counter: f"{value:06d}"},
                counter_values={counter: value},
            )
            for value in values
        ],
        printed_at=time.strftime("%Y-%m-%dT%H:%M:%S.123Z", time.gmtime(time.time() - 3600)),
    )
    for name, value in changes.items():
        setattr(taken, name, value)
    return taken
