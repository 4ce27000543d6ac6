"""Local mode polls a template's SQS event sources with Lambda's batch semantics."""

from __future__ import annotations

import json
import time
from pathlib import Path

import boto3
import pytest

from etikett.local import provision
from etikett.local.aws import LocalAws
from etikett.local.functions import FunctionRegistry
from etikett.local.sqs import SqsPoller
from etikett.local.template import load

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "sqs_app" / "template.yaml"
REGION = "eu-central-1"


@pytest.fixture
def local_aws(monkeypatch: pytest.MonkeyPatch):
    with LocalAws(None) as aws:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "local",
            "AWS_SECRET_ACCESS_KEY": "local",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "AWS_ENDPOINT_URL": aws.endpoint_url,
        }.items():
            monkeypatch.setenv(name, value)
        yield aws


def test_batches_are_delivered_failed_items_retried_then_dead_lettered(
    local_aws: LocalAws, monkeypatch
) -> None:
    template = load(FIXTURE)
    assert [
        (s.function, s.queue, s.batch_size, s.report_item_failures) for s in template.sqs_sources
    ] == [("Consumer", "Work", 5, True)]
    resolver = provision.provision(template, local_aws.endpoint_url, REGION)
    for name, value in provision.function_environment(template, resolver).items():
        monkeypatch.setenv(name, value)
    sqs = boto3.client("sqs", region_name=REGION, endpoint_url=local_aws.endpoint_url)
    table = boto3.resource(
        "dynamodb", region_name=REGION, endpoint_url=local_aws.endpoint_url
    ).Table(resolver.refs["Seen"])
    work, dlq = resolver.refs["Work"], resolver.refs["WorkDlq"]
    for n in range(12):
        sqs.send_message(QueueUrl=work, MessageBody=json.dumps({"n": n, "fail": n == 7}))

    poller = SqsPoller(
        template.sqs_sources,
        resolver,
        FunctionRegistry(template.functions, REGION),
        local_aws.endpoint_url,
        REGION,
    )
    poller.start()
    try:
        deadline = time.monotonic() + 60
        dead: list[dict] = []
        while time.monotonic() < deadline and not dead:
            dead = sqs.receive_message(QueueUrl=dlq, WaitTimeSeconds=1).get("Messages", [])
    finally:
        poller.stop()

    assert [json.loads(m["Body"])["n"] for m in dead] == [7]
    handled = {item["n"]: int(item["handled"]) for item in table.scan()["Items"]}
    assert set(handled) == {str(n) for n in range(12)}
    # Successful items were deleted after their batch: handled exactly once.
    assert all(count == 1 for n, count in handled.items() if n != "7")
    assert handled["7"] == 2  # tried maxReceiveCount times, then redriven
    attributes = sqs.get_queue_attributes(QueueUrl=work, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "0"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "0"
