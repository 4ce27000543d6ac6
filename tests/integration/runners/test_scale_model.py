"""docs/scale.md's cost model cannot drift from the code: the AWS calls it counts per operation
(its `scale-model` block) are counted here, on a local service whose every botocore call is
logged with the request it serves (bench/aws_call_log, as bench/aws_calls.py counts prints), and
its idle Runner-month is computed again from its own prices."""

from __future__ import annotations

import json
import os
import re
import statistics
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from support.runner_site import FakeSite
from support.server import DevServer

REPO = Path(__file__).resolve().parents[3]
PAGE = REPO / "docs" / "scale.md"
ROUNDS = 4  # counted rounds per operation, after one warm-up round


def model() -> dict[str, Any]:
    text = PAGE.read_text()
    found = re.search(r"<!-- scale-model -->\s*```yaml\n(.*?)```", text, re.S)
    assert found, "docs/scale.md has no scale-model block"
    return dict(yaml.safe_load(found.group(1)))


@pytest.fixture(scope="module")
def counted_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DevServer, Path]]:
    work = tmp_path_factory.mktemp("scale")
    log = work / "calls.log"
    log.touch()
    bench = REPO / "bench" / "aws_call_log"
    paths = [str(bench), *filter(None, [os.environ.get("PYTHONPATH")])]
    # A Runner's promise to poll lasts a second here: a print to a Runner that said it waits for
    # wakes is counted with its wake.
    server = DevServer(
        work / "home",
        env={
            "ETIKETT_BENCH_CALL_LOG": str(log),
            "PYTHONPATH": os.pathsep.join(paths),
            "ETIKETT_RUNNER_AWAKE_SECONDS": "1",
        },
    )
    server.start()
    yield server, log
    server.stop()


class Counter:
    def __init__(self, log: Path) -> None:
        self.log = log

    def calls(self, route: str, action: Callable[[], Any]) -> int:
        """The service's AWS calls made while serving `route` during `action()`."""
        before = self.log.stat().st_size
        action()
        lines = self.log.read_bytes()[before:].decode().splitlines()
        return sum(1 for line in lines if line.split("\t")[3] == route.replace(" ", "_"))

    def median(self, route: str, action: Callable[[], Any]) -> float:
        self.calls(route, action)  # warm: the function's caches as in steady use
        return statistics.median(self.calls(route, action) for _ in range(ROUNDS))


def test_the_models_calls_per_operation_are_the_counted_ones(
    counted_server: tuple[DevServer, Path], tmp_path: Path
) -> None:
    server, log = counted_server
    counter = Counter(log)
    api = httpx.Client(base_url=f"{server.url}/api/v1", timeout=60, trust_env=False)
    token = api.post("/auth/setup", json={"username": "scale", "password": "scale password 1"})
    api.headers["Authorization"] = f"Bearer {token.json()['token']}"
    group = api.post("/runner-groups", json={"name": "scale"}).json()
    enrollment = api.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    site = FakeSite(tmp_path, "scale-site")

    class _Api:  # FakeSite enrolls with the tests' Api (post with token=)
        def post(self, path: str, token: str, **kwargs: Any) -> httpx.Response:
            return api.post(path, headers={"Authorization": f"Bearer {token}"}, **kwargs)

    assert site.enroll(_Api(), enrollment["token"]).status_code == 201  # type: ignore[arg-type]
    runner_id = site.enrollment["runner_id"]
    agent = site.agent(server)
    printer = api.post(
        "/printers",
        json={
            "name": "scale",
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9100",
            "language": "zpl",
            "dpi": 203,
        },
    )
    assert printer.status_code == 201, printer.text
    label = api.post(
        "/labels/from-dimensions", json={"name": "scale", "width_mm": 50, "height_mm": 25}
    ).json()
    text = {"id": "t", "type": "text", "x_mm": 2, "y_mm": 2, "expression": "'Scale'"}
    patched = api.patch(
        f"/labels/{label['id']}/document",
        json={"operations": [{"op": "add", "path": "/objects/-", "value": text}]},
    )
    assert patched.status_code == 200, patched.text
    assert (
        api.post(f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"})
    ).status_code == 200
    access = agent.post("/queue-access").json()
    import botocore.session

    sqs = botocore.session.Session().create_client(
        "sqs",
        region_name=access["region"],
        endpoint_url=access["endpoint_url"],
        aws_access_key_id=access["access_key_id"],
        aws_secret_access_key=access["secret_access_key"],
        aws_session_token=access["session_token"],
    )
    queue = access["queue_url"]
    for message in sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=0).get("Messages", []):
        sqs.delete_message(QueueUrl=queue, ReceiptHandle=message["ReceiptHandle"])  # notices

    counted: dict[str, float] = {}
    beat = {"hostname": "site-pc", "version": "0.1"}
    counted["postRunnerHeartbeat"] = counter.median(
        "POST /api/v1/runner-agent/heartbeat", lambda: agent.post("/heartbeat", json=beat)
    )
    counted["postRunnerQueueAccess"] = counter.median(
        "POST /api/v1/runner-agent/queue-access", lambda: agent.post("/queue-access")
    )
    counted["postLabelPreview"] = counter.median(
        "POST /api/v1/labels/{labelId}/preview",
        lambda: api.post(f"/labels/{label['id']}/preview", json={}),
    )

    # One single-label print, as the Runner sees it: POST /print, the Runner's own receive,
    # its claim, `sent` and the final `confirmed`.
    rounds: dict[str, list[int]] = {"postPrint": [], "claim": [], "sent": [], "confirmed": []}
    for index in range(ROUNDS + 1):
        job_id = ""

        def send() -> None:
            nonlocal job_id
            response = api.post("/print", json={"label_id": label["id"], "printer": "scale"})
            assert response.status_code == 202, response.text
            job_id = response.json()["job_id"]

        printed = counter.calls("POST /api/v1/print", send)
        message = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=5)["Messages"][0]
        body = json.loads(message["Body"])
        body.pop("data_base64", None)
        received = {"receipt": message["ReceiptHandle"], "delivery": 1, "body": json.dumps(body)}
        receipt = message["ReceiptHandle"]
        claim = {"messages": [received], "keeps_hidden": True}  # as the Runner claims
        claims = counter.calls(
            "POST /api/v1/runner-agent/jobs/claim-received",
            lambda claim=claim: agent.post("/jobs/claim-received", json=claim),
        )
        report = "POST /api/v1/runner-agent/jobs/{jobId}/report"
        path = f"/jobs/{job_id}/report"
        body_sent = {"receipt": receipt, "status": "sent"}
        sent = counter.calls(report, lambda p=path, b=body_sent: agent.post(p, json=b))
        # As a Runner whose printer confirmed within the hold: `sent` rides along (the same
        # calls as alone: the sent step is the job's status already here).
        final = {
            "receipt": receipt,
            "status": "confirmed",
            "final": True,
            "earlier": [{"status": "sent"}],
        }
        confirmed = counter.calls(report, lambda p=path, b=final: agent.post(p, json=b))
        if index:  # the first round warms the functions
            for name, value in zip(rounds, (printed, claims, sent, confirmed), strict=True):
                rounds[name].append(value)
    # A print to a Runner that waits for wakes and stopped polling: its wake too.
    assert agent.post("/heartbeat", json={"awake": True}).json()["awake_seconds"] == 1
    waking = []
    for _ in range(ROUNDS):
        waking.append(
            counter.calls(
                "POST /api/v1/print",
                lambda: api.post("/print", json={"label_id": label["id"], "printer": "scale"}),
            )
        )
    counted |= {
        "postPrint": statistics.median(rounds["postPrint"]),
        "postPrint_waking": statistics.median(waking),
        "postRunnerJobClaimReceived": statistics.median(rounds["claim"]),
        "postRunnerJobReport_sent": statistics.median(rounds["sent"]),
        "postRunnerJobReport_final": statistics.median(rounds["confirmed"]),
    }
    documented = model()
    assert documented["service_calls_per_request"] == counted, (
        f"docs/scale.md says {documented['service_calls_per_request']}, counted {counted}"
    )
    assert documented["idle_runner"]["receive_wait_seconds"] == access["wait_seconds"]
    assert documented["idle_runner"]["heartbeat_seconds"] == access["heartbeat_seconds"]
    assert documented["idle_runner"]["look_seconds"] == access["wake"]["look_seconds"]
    assert documented["idle_runner"]["keepalive_seconds"] == access["wake"]["keepalive_seconds"]


def test_the_pages_idle_runner_month_follows_from_its_own_numbers() -> None:
    documented = model()
    prices, idle = documented["prices_usd"], documented["idle_runner"]
    calls = documented["service_calls_per_request"]
    month = 30 * 24 * 60  # minutes
    # Waiting for wakes: a 20 s look at its queue every `look_seconds`, the MQTT connection's
    # minutes and keep-alive pings (counted as messages), beats and credential renewals.
    receives = month * 60 / idle["look_seconds"]
    pings = month * 60 / idle["keepalive_seconds"]
    beats = month * 60 / idle["heartbeat_seconds"]
    renewals = month * 60 / idle["credential_renewal_seconds"]
    requests = beats + renewals
    lambda_seconds = beats * idle["heartbeat_ms"] / 1000 + renewals * idle["queue_access_ms"] / 1000
    dynamodb = beats * calls["postRunnerHeartbeat"] + renewals * (
        calls["postRunnerQueueAccess"] - 1  # one of them is STS's AssumeRole, not DynamoDB
    )
    cost = (
        receives * prices["sqs_request"]
        + pings * prices["iot_message"]
        + month * prices["iot_connection_minute"]
        + requests * (prices["http_api_request"] + prices["lambda_request"])
        + lambda_seconds * idle["lambda_gb"] * prices["lambda_gb_second"]
        + dynamodb * prices["dynamodb_request_unit"]
    )
    assert round(cost, 4) == documented["results"]["idle_runner_month_usd"]
    per_minute = (
        receives + pings + beats * calls["postRunnerHeartbeat"]
    ) / month + renewals * calls["postRunnerQueueAccess"] / month
    assert round(per_minute, 2) == documented["results"]["idle_aws_requests_per_minute"]
