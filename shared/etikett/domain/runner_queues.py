"""Each Runner's own SQS queue: created when the Runner is admitted, removed with it. Jobs are
sent here and the Runner long-polls it through the agent channel."""

from __future__ import annotations

import contextlib
import json
import os
from functools import cache
from typing import Any

from etikett import clients

VISIBILITY_SECONDS = 120  # a claimed job stays invisible this long; reports extend it
MAX_RECEIVES = 10  # then the job's message moves to the shared dead-letter queue


@cache
def _sqs() -> Any:
    return clients.client("sqs")


def queue_name(runner_id: str) -> str:
    prefix = os.environ.get("ETIKETT_RUNNER_QUEUE_PREFIX", "etikett-runner")
    return f"{prefix}-{runner_id.lower()}"


def create(runner_id: str) -> str:
    """Create (or find: CreateQueue is idempotent for equal attributes) the Runner's queue."""
    attributes = {
        "VisibilityTimeout": str(VISIBILITY_SECONDS),
        "MessageRetentionPeriod": str(14 * 24 * 3600),
    }
    dlq = os.environ.get("ETIKETT_RUNNER_DLQ_ARN")
    if dlq:
        attributes["RedrivePolicy"] = json.dumps(
            {"deadLetterTargetArn": dlq, "maxReceiveCount": str(MAX_RECEIVES)}
        )
    return str(
        _sqs().create_queue(QueueName=queue_name(runner_id), Attributes=attributes)["QueueUrl"]
    )


def delete(queue_url: str) -> None:
    sqs = _sqs()
    with contextlib.suppress(sqs.exceptions.QueueDoesNotExist):
        sqs.delete_queue(QueueUrl=queue_url)


def send(queue_url: str, job_id: str) -> None:
    """The message only names the job; the job's state lives in the jobs table."""
    _sqs().send_message(QueueUrl=queue_url, MessageBody=json.dumps({"job_id": job_id}))


def receive(queue_url: str, wait_seconds: int, max_jobs: int) -> list[tuple[str, str, int]]:
    """(job id, receipt handle, receive count) of up to `max_jobs` messages."""
    messages = (
        _sqs()
        .receive_message(
            QueueUrl=queue_url,
            WaitTimeSeconds=wait_seconds,
            MaxNumberOfMessages=max_jobs,
            VisibilityTimeout=VISIBILITY_SECONDS,
            AttributeNames=["ApproximateReceiveCount"],
        )
        .get("Messages", [])
    )
    claimed = []
    for message in messages:
        try:
            job_id = str(json.loads(message["Body"])["job_id"])
        except (ValueError, KeyError, TypeError):
            _sqs().delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
            continue  # not ours: drop it rather than block the queue
        count = int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
        claimed.append((job_id, message["ReceiptHandle"], count))
    return claimed


def extend(queue_url: str, receipt: str) -> None:
    sqs = _sqs()
    # The message may be gone or delivered again: the report itself still counts.
    with contextlib.suppress(sqs.exceptions.ClientError):
        sqs.change_message_visibility(
            QueueUrl=queue_url, ReceiptHandle=receipt, VisibilityTimeout=VISIBILITY_SECONDS
        )


def acknowledge(queue_url: str, receipt: str) -> None:
    sqs = _sqs()
    with contextlib.suppress(sqs.exceptions.ClientError):
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=receipt)
