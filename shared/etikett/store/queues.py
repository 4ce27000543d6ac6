"""The webhook deliveries queue (SQS): one message per delivery task, retried by visibility."""

from __future__ import annotations

from typing import Any

from etikett.settings import get_settings
from etikett.store import clients


class QueueRefused(Exception):
    """The queue refused some messages of a batch."""


def send_deliveries(bodies: list[str]) -> None:
    """Delivery tasks, ten messages per call (SQS's batch size); no call for none."""
    queue = get_settings().required("webhook_deliveries_queue")
    for start in range(0, len(bodies), 10):
        chunk = bodies[start : start + 10]
        answer: dict[str, Any] = clients.client("sqs").send_message_batch(
            QueueUrl=queue,
            Entries=[{"Id": str(i), "MessageBody": body} for i, body in enumerate(chunk)],
        )
        if answer.get("Failed"):
            raise QueueRefused(f"deliveries queue refused {len(answer['Failed'])} of {len(chunk)}")


def postpone_delivery(receipt_handle: str, seconds: int) -> None:
    """A received delivery message becomes visible again in `seconds` (the backoff)."""
    clients.client("sqs").change_message_visibility(
        QueueUrl=get_settings().required("webhook_deliveries_queue"),
        ReceiptHandle=receipt_handle,
        VisibilityTimeout=seconds,
    )
