"""Lambda entry of the webhook sender, the consumer of the deliveries queue (filled by the events
publisher's fan-out): each task is one signed POST; a failure is retried after a backoff (the
message is made visible again later and reported as a failed batch item), and after the last
attempt the queue's redrive moves it to the dead-letter queue.

Deliveries of one batch run concurrently, so a slow receiver holds up no other receiver."""

# First: the garbage collector pauses while the rest loads (etikett.coldstart).
from etikett import coldstart

coldstart.libraries(*coldstart.BATCH_LIBRARIES, *coldstart.TABLE_LIBRARIES)

# isort: split
import asyncio
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import (
    AsyncBatchProcessor,
    EventType,
    async_process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

from etikett.domain.webhooks import webhook_delivery, webhook_fanout

logger = Logger(service="etikett-webhook-sender")
# Failed deliveries are an expected outcome (retried later), not an error of the function.
delivery_processor = AsyncBatchProcessor(
    event_type=EventType.SQS, raise_on_entire_batch_failure=False
)


class RetryLater(Exception):
    """Leaves a delivery message on the queue (a failed batch item) for its next attempt."""


def deliver(record: SQSRecord) -> None:
    task = webhook_fanout.Task.from_message(record.body)
    attempt = int(record.attributes.approximate_receive_count)
    decision = webhook_delivery.deliver(task, attempt, record.message_id)
    details = {
        "webhook_id": task.webhook_id,
        "event_id": task.event.get("id"),
        "attempt": attempt,
        "note": decision.note,
    }
    if decision.done:
        logger.info("delivery finished", extra=details)
        return
    if decision.dead:
        # Visible again at once: the next receive exceeds maxReceiveCount and dead-letters it.
        webhook_delivery.postpone(record.receipt_handle, 0)
        logger.warning("delivery dead after its last attempt", extra=details)
        raise RetryLater(decision.note)
    assert decision.retry_in is not None
    webhook_delivery.postpone(record.receipt_handle, decision.retry_in)
    logger.info("delivery failed; retrying later", extra={**details, "in": decision.retry_in})
    raise RetryLater(decision.note)


async def deliver_async(record: SQSRecord) -> None:
    await asyncio.to_thread(deliver, record)


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    return async_process_partial_response(
        event=event, record_handler=deliver_async, processor=delivery_processor, context=context
    )


coldstart.done()
