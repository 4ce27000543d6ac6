"""An idle Runner waits at its own SQS queue with credentials for that queue alone (issue 29):
this test plays the Runner with a real certificate over mutual TLS and real SigV4 requests to
local AWS, which checks session credentials with moto's IAM code and the session policy."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path
from typing import Any

import botocore.config
import botocore.session
import httpx
import pytest
from botocore.exceptions import ClientError

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer


@pytest.fixture(scope="module")
def operator(admin: Api) -> Api:
    return admin.user_session(["operator"])[1]


def _admitted(admin: Api, dev_server: DevServer, tmp_path: Path) -> tuple[str, httpx.Client]:
    group = admin.post("/runner-groups", json={"name": unique("Halle")}).json()
    token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    site = FakeSite(tmp_path, unique("site"))
    assert site.enroll(admin, token["token"]).status_code == 201
    return site.enrollment["runner_id"], site.agent(dev_server)


def _sqs(access: dict[str, Any]) -> Any:
    return botocore.session.Session().create_client(
        "sqs",
        region_name=access["region"],
        endpoint_url=access["endpoint_url"],
        aws_access_key_id=access["access_key_id"],
        aws_secret_access_key=access["secret_access_key"],
        aws_session_token=access["session_token"],
        config=botocore.config.Config(retries={"max_attempts": 1}),
    )


def _refused(call: Any) -> int:
    with pytest.raises(ClientError) as refused:
        call()
    return int(refused.value.response["ResponseMetadata"]["HTTPStatusCode"])


def _access(agent: httpx.Client) -> dict[str, Any]:
    response = agent.post("/queue-access")
    assert response.status_code == 200, response.text
    return dict(response.json())


def test_a_runners_credentials_reach_its_own_queue_and_nothing_else(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    _, agent = _admitted(admin, dev_server, tmp_path)
    _, other_agent = _admitted(admin, dev_server, tmp_path)
    mine, theirs = _access(agent), _access(other_agent)
    assert mine["queue_url"] != theirs["queue_url"]
    assert mine["heartbeat_seconds"] == 600  # the service counts it offline after 25 min
    sqs = _sqs(mine)
    assert (
        sqs.receive_message(QueueUrl=mine["queue_url"], WaitTimeSeconds=0).get("Messages", []) == []
    )
    # Another Runner's queue: refused, whatever the operation.
    assert _refused(lambda: sqs.receive_message(QueueUrl=theirs["queue_url"])) == 403
    assert _refused(lambda: sqs.purge_queue(QueueUrl=theirs["queue_url"])) == 403
    # Its own queue, but an operation only the service does (jobs are sent by the service).
    send = lambda: sqs.send_message(QueueUrl=mine["queue_url"], MessageBody="{}")  # noqa: E731
    assert _refused(send) == 403
    # Nothing beyond SQS either.
    dynamodb = botocore.session.Session().create_client(
        "dynamodb",
        region_name=mine["region"],
        endpoint_url=mine["endpoint_url"],
        aws_access_key_id=mine["access_key_id"],
        aws_secret_access_key=mine["secret_access_key"],
        aws_session_token=mine["session_token"],
    )
    assert _refused(lambda: dynamodb.list_tables()) == 403
    # A forged signature (the right key id, another secret) is refused too.
    forged = _sqs({**mine, "secret_access_key": "x" * 40})
    assert _refused(lambda: forged.receive_message(QueueUrl=mine["queue_url"])) == 403


def test_a_job_received_at_the_queue_is_claimed_through_the_channel_once(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    runner_id, agent = _admitted(admin, dev_server, tmp_path)
    _, other_agent = _admitted(admin, dev_server, tmp_path)
    created = operator.post(
        "/printers",
        json={
            "name": unique("p"),
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9100",
            "language": "zpl",
            "dpi": 203,
        },
    )
    assert created.status_code == 201, created.text
    printer = created.json()
    access = _access(agent)
    sqs = _sqs(access)
    # Adding the printer told the Runner its configuration changed: a notice on its queue.
    notices = sqs.receive_message(QueueUrl=access["queue_url"], WaitTimeSeconds=1)["Messages"]
    assert [json.loads(m["Body"]) for m in notices] == [{"notice": "config"}]
    sqs.delete_message(QueueUrl=access["queue_url"], ReceiptHandle=notices[0]["ReceiptHandle"])

    data = b"^XA^FO10,10^GB100,100,4^FS^XZ"
    job = operator.post(
        f"/runners/{runner_id}/jobs",
        json={"printer_id": printer["id"], "data_base64": base64.b64encode(data).decode()},
    ).json()
    message = sqs.receive_message(
        QueueUrl=access["queue_url"],
        WaitTimeSeconds=5,
        VisibilityTimeout=120,
        MessageSystemAttributeNames=["ApproximateReceiveCount"],
    )["Messages"][0]
    body = json.loads(message["Body"])
    assert body["job_id"] == job["id"] and base64.b64decode(body.pop("data_base64")) == data
    received = {"receipt": message["ReceiptHandle"], "delivery": 1, "body": json.dumps(body)}
    # Another Runner handing in this message claims nothing: the job is not its own.
    stolen = other_agent.post("/jobs/claim-received", json={"messages": [received]})
    assert stolen.status_code == 200 and stolen.json()["jobs"] == []
    claimed = agent.post("/jobs/claim-received", json={"messages": [received]}).json()["jobs"]
    assert [j["job_id"] for j in claimed] == [job["id"]]
    assert claimed[0]["receipt"] == message["ReceiptHandle"]
    assert claimed[0]["payload"]["printer"]["uri"] == "tcp://127.0.0.1:9100"
    assert operator.get(f"/jobs/{job['id']}").json()["status"] == "running"
    # The final report deletes the message with the receipt of the Runner's own receive.
    report = {"receipt": message["ReceiptHandle"], "status": "succeeded", "final": True}
    assert agent.post(f"/jobs/{job['id']}/report", json=report).status_code == 200
    assert (
        sqs.receive_message(QueueUrl=access["queue_url"], WaitTimeSeconds=1).get("Messages", [])
        == []
    )
    # A message that is no job (garbage) leaves the queue and claims nothing.
    garbage = {"receipt": message["ReceiptHandle"], "delivery": 1, "body": "not json"}
    assert agent.post("/jobs/claim-received", json={"messages": [garbage]}).json()["jobs"] == []


def test_removing_a_runner_cuts_its_queue_credentials_off_at_once(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    runner_id, agent = _admitted(admin, dev_server, tmp_path)
    access = _access(agent)
    sqs = _sqs(access)
    sqs.receive_message(QueueUrl=access["queue_url"], WaitTimeSeconds=0)
    removed = time.monotonic()
    assert admin.delete(f"/runners/{runner_id}").status_code == 204
    # The credentials are still within their lifetime, but the queue they reached is gone
    # (AWS answers "no such queue"; local AWS, which finds no queue ARN to match the session
    # policy against, answers "access denied").
    status = _refused(lambda: sqs.receive_message(QueueUrl=access["queue_url"]))
    assert status in (400, 403)
    assert time.monotonic() - removed < 60
    # And no new credentials: the certificate's Runner is gone.
    problem(agent.post("/queue-access"), 401, "runner.removed")
