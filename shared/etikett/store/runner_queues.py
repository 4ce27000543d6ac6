"""Each Runner's own SQS queue: created when the Runner is admitted, removed with it. Jobs and
notices are sent here; the Runner long-polls it itself with credentials for this queue alone
(runner_queue_access.py) and asks the agent channel to claim the jobs it receives."""

from __future__ import annotations

import base64
import contextlib
import json
import time
from typing import Any, NamedTuple

from etikett.settings import get_settings
from etikett.store import clients

VISIBILITY_SECONDS = 120  # a claimed job stays invisible this long; reports extend it
MAX_RECEIVES = 10  # then the job's message moves to the shared dead-letter queue
# Job bytes up to this size travel in the message itself (as base64, well under SQS's 256 KB):
# no S3 round trip when the job is queued nor when it is claimed. Larger bytes go through S3.
MESSAGE_DATA_BYTES = 128_000


# A job's kind and payload travel in its message up to this size (as JSON), so that a first
# claim writes the job without reading it first; larger payloads are read from the table.
MESSAGE_PAYLOAD_BYTES = 16_000


class Received(NamedTuple):
    job_id: str
    receipt: str
    delivery: int  # 1 for the first receive
    data_base64: str | None  # the job's bytes, when the message carries them
    kind: str | None = None  # the job's kind and payload as queued, when the message carries them
    payload: dict[str, Any] | None = None


class QueueGone(Exception):
    """The queue does not exist (any more): its Runner was removed."""


def _sqs() -> Any:
    return clients.client("sqs")


def queue_name(runner_id: str) -> str:
    prefix = get_settings().runner_queue_prefix
    return f"{prefix}-{runner_id.lower()}"


def create(runner_id: str) -> str:
    """Create (or find: CreateQueue is idempotent for equal attributes) the Runner's queue."""
    attributes = {
        "VisibilityTimeout": str(VISIBILITY_SECONDS),
        "MessageRetentionPeriod": str(14 * 24 * 3600),
    }
    dlq = get_settings().runner_dlq_arn
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


def send(
    queue_url: str,
    job_id: str,
    data: bytes | None = None,
    *,
    kind: str | None = None,
    payload: dict[str, Any] | None = None,
) -> None:
    """The message names the job (whose state lives in the jobs table) and carries its bytes
    when they are at most MESSAGE_DATA_BYTES, and its kind and payload as queued when that is at
    most MESSAGE_PAYLOAD_BYTES. Only the service writes to a Runner's queue."""
    body: dict[str, Any] = {"job_id": job_id}
    if data is not None:
        if len(data) > MESSAGE_DATA_BYTES:
            raise ValueError(f"{len(data)} bytes do not travel in a message; store them")
        body["data_base64"] = base64.b64encode(data).decode()
    if (
        kind is not None
        and payload is not None
        and len(json.dumps(payload)) <= (MESSAGE_PAYLOAD_BYTES)
    ):
        body |= {"kind": kind, "payload": payload}
    _sqs().send_message(QueueUrl=queue_url, MessageBody=json.dumps(body))


def receive(queue_url: str, wait_seconds: int, max_jobs: int) -> list[Received]:
    """Up to `max_jobs` job messages; QueueGone if the queue was deleted. Messages that are no
    job (notices for Runners that poll their queue themselves, garbage) are dropped and the
    wait goes on for what is left of it."""
    sqs = _sqs()
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            messages = sqs.receive_message(
                QueueUrl=queue_url,
                WaitTimeSeconds=wait_seconds,
                MaxNumberOfMessages=max_jobs,
                VisibilityTimeout=VISIBILITY_SECONDS,
                AttributeNames=["ApproximateReceiveCount"],
            ).get("Messages", [])
        except sqs.exceptions.QueueDoesNotExist as error:
            raise QueueGone(queue_url) from error
        claimed = []
        for message in messages:
            count = int(message.get("Attributes", {}).get("ApproximateReceiveCount", "1"))
            item = parse(message["Body"], message["ReceiptHandle"], count)
            if item is None:
                _sqs().delete_message(QueueUrl=queue_url, ReceiptHandle=message["ReceiptHandle"])
                continue  # not a job: drop it rather than block the queue
            claimed.append(item)
        if claimed or not messages:
            return claimed
        wait_seconds = max(0, int(deadline - time.monotonic()))  # only notices: look again


def parse(body_text: str, receipt: str, delivery: int) -> Received | None:
    """A job message as the service sent it; None if it is not one (a notice, or garbage)."""
    try:
        body = json.loads(body_text)
        job_id = str(body["job_id"])
        data = body.get("data_base64")
        if data is not None and not isinstance(data, str):
            raise TypeError("data_base64 is not a string")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    kind, payload = body.get("kind"), body.get("payload")
    if not isinstance(kind, str) or not isinstance(payload, dict):
        kind, payload = None, None  # queued before messages carried them: read the job
    return Received(job_id, receipt, delivery, data, kind, payload)


def notify(queue_url: str, notice: str) -> None:
    """A notice for the Runner itself (e.g. "config": ask for configuration and flows now),
    which it reads from its queue and deletes; never a job. A removed queue is no one's."""
    sqs = _sqs()
    with contextlib.suppress(sqs.exceptions.QueueDoesNotExist):
        sqs.send_message(QueueUrl=queue_url, MessageBody=json.dumps({"notice": notice}))


def extend(queue_url: str, receipt: str) -> None:
    sqs = _sqs()
    # The message may be gone or delivered again: the report itself still counts.
    with contextlib.suppress(sqs.exceptions.ClientError):
        sqs.change_message_visibility(
            QueueUrl=queue_url, ReceiptHandle=receipt, VisibilityTimeout=VISIBILITY_SECONDS
        )


def release(queue_url: str, receipt: str) -> None:
    """Make a claimed message visible again at once (its claimer is gone)."""
    sqs = _sqs()
    with contextlib.suppress(sqs.exceptions.ClientError):  # deleted or delivered again since
        sqs.change_message_visibility(
            QueueUrl=queue_url, ReceiptHandle=receipt, VisibilityTimeout=0
        )


def acknowledge(queue_url: str, receipt: str) -> None:
    sqs = _sqs()
    with contextlib.suppress(sqs.exceptions.ClientError):
        sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=receipt)
