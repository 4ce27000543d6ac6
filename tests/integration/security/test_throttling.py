"""DynamoDB throttling beyond the SDK's retries, injected at local mode's moto server
(etikett.local.faults): the service answers 503 `service.busy` with Retry-After, and a Runner's
claim that failed so hands its jobs back to the queue at once (end to end with prints:
tests/e2e/test_faults.py)."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer


@pytest.fixture
def faults(dev_server: DevServer) -> Iterator[httpx.Client]:
    client = httpx.Client(base_url=f"{dev_server.aws_endpoint()}/moto-api/etikett/faults")
    yield client
    client.delete("")


def throttle_writes(faults: httpx.Client) -> None:
    rule = {"service": "dynamodb", "operations": ["TransactWriteItems"]}
    faults.post("", json={"rules": [rule]}).raise_for_status()


def test_a_change_the_database_throttles_is_503_busy_and_not_made(
    admin: Api, faults: httpx.Client
) -> None:
    name = unique("busy").replace("-", "_")
    throttle_writes(faults)
    response = admin.post("/counters", json={"name": name})
    faults.delete("")
    body = problem(response, 503, "service.busy")
    assert response.headers["retry-after"] == "1" and body["params"]["request_id"]
    problem(admin.get(f"/counters/{name}"), 404, "counter.not_found")
    assert admin.post("/counters", json={"name": name}).status_code == 201  # the retry


def test_a_change_the_database_cannot_answer_is_503_busy_not_a_500(
    admin: Api, faults: httpx.Client
) -> None:
    """An overloaded database (5xx beyond the SDK's retries; a timeout is the same) is a 503
    the client may retry, never `internal.error`."""
    name = unique("away").replace("-", "_")
    rule = {"service": "dynamodb", "operations": ["TransactWriteItems"], "error": "unavailable"}
    faults.post("", json={"rules": [rule]}).raise_for_status()
    response = admin.post("/counters", json={"name": name})
    faults.delete("")
    problem(response, 503, "service.busy")
    assert response.headers["retry-after"]
    problem(admin.get(f"/counters/{name}"), 404, "counter.not_found")
    assert admin.post("/counters", json={"name": name}).status_code == 201


def test_a_claim_the_database_throttles_gives_its_job_back_at_once(
    admin: Api, dev_server: DevServer, faults: httpx.Client, tmp_path: Path
) -> None:
    group = admin.post("/runner-groups", json={"name": unique("busy")}).json()
    token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    site = FakeSite(tmp_path, "busy-runner")
    assert site.enroll(admin, token["token"]).status_code == 201
    agent = site.agent(dev_server)
    assert agent.post("/heartbeat", json={"hostname": "site-pc"}).status_code == 200
    runner_id = site.enrollment["runner_id"]
    printer = admin.post(
        "/printers",
        json={
            "name": unique("busy"),
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9100",
            "language": "zpl",
            "dpi": 203,
        },
    ).json()
    data = base64.b64encode(b"^XA^FO10,10^GB100,100,4^FS^XZ").decode()
    job = admin.post(
        f"/runners/{runner_id}/jobs", json={"printer_id": printer["id"], "data_base64": data}
    ).json()
    throttle_writes(faults)
    refused = agent.post("/jobs/claim", json={"wait_seconds": 1})
    faults.delete("")
    assert refused.status_code == 503 and refused.json()["code"] == "service.busy", refused.text
    # Not after the queue's 120 s visibility timeout: now.
    claimed = agent.post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"]
    assert [item["job_id"] for item in claimed] == [job["id"]]
