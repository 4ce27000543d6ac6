"""Local AWS's HTTP handler (moto_http): each answer in one write, head and body, and werkzeug's
request log still written when its logger wants it."""

from __future__ import annotations

import logging
from typing import Any

import boto3
import pytest

from etikett.local.aws import LocalAws
from etikett.local.moto_http import KeepAliveMotoRequestHandler


def test_each_answer_goes_out_in_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[bytes] = []
    setup = KeepAliveMotoRequestHandler.setup

    def counted_setup(self: Any) -> None:
        setup(self)
        write = self.wfile.write
        self.wfile.write = lambda data: writes.append(bytes(data)) or write(data)

    monkeypatch.setattr(KeepAliveMotoRequestHandler, "setup", counted_setup)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with LocalAws(None) as aws:
        sqs = boto3.client("sqs", region_name="eu-central-1", endpoint_url=aws.endpoint_url)
        url = sqs.create_queue(QueueName="q")["QueueUrl"]
        sqs.send_message(QueueUrl=url, MessageBody="x" * 100_000)  # beyond one segment
        assert sqs.receive_message(QueueUrl=url)["Messages"][0]["Body"] == "x" * 100_000
        s3 = boto3.client("s3", region_name="eu-central-1", endpoint_url=aws.endpoint_url)
        s3.create_bucket(
            Bucket="answers", CreateBucketConfiguration={"LocationConstraint": "eu-central-1"}
        )
        s3.head_bucket(Bucket="answers")  # a HEAD: the head alone
    assert len(writes) == 5
    assert all(write.startswith(b"HTTP/1.1 200 OK\r\n") for write in writes)
    received = writes[2]
    head, _, body = received.partition(b"\r\n\r\n")
    assert f"Content-Length: {len(body)}".encode() in head and b"x" * 100_000 in body
    assert writes[4].endswith(b"\r\n\r\n")


def test_werkzeug_s_request_log_is_written_when_its_logger_wants_it(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    werkzeug = logging.getLogger("werkzeug")
    with LocalAws(None) as aws:  # sets werkzeug's logger to WARNING
        sqs = boto3.client("sqs", region_name="eu-central-1", endpoint_url=aws.endpoint_url)
        with caplog.at_level(logging.INFO, logger="werkzeug"):
            sqs.list_queues()
            werkzeug.setLevel(logging.WARNING)
            sqs.list_queues()
    logged = [r.getMessage() for r in caplog.records if r.name == "werkzeug"]
    assert len(logged) == 1 and '"POST / HTTP/1.1" 200' in logged[0]
