"""Lambda entry of the events publisher: reads the events table's stream (the outbox) and fans
each new event out to the receivers subscribed to its kind (one deliveries-queue message each),
so an event is published iff its outbox item was committed.

A failed record (the subscriptions unreadable, the deliveries queue refusing) is reported as a
batch item failure: the stream is retried from it, in order. Fanning an event out again is
harmless: each delivery is claimed by one message only (`webhook_delivery.claim`)."""

# First: the garbage collector pauses while the rest loads (etikett.coldstart).
from etikett import coldstart

coldstart.libraries(*coldstart.BATCH_LIBRARIES, *coldstart.TABLE_LIBRARIES)

# isort: split
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.batch.types import PartialItemFailureResponse
from aws_lambda_powertools.utilities.data_classes.dynamo_db_stream_event import (
    DynamoDBRecord,
    DynamoDBRecordEventName,
)

from etikett.domain.webhooks import events, webhook_fanout

logger = Logger(service="etikett-events-publisher")
processor = BatchProcessor(event_type=EventType.DynamoDBStreams)


def publish(
    record: DynamoDBRecord, subscriptions: webhook_fanout.Subscriptions | None = None
) -> None:
    # Only a new outbox item is an event; later changes to it (none today) are not new events.
    if record.event_name != DynamoDBRecordEventName.INSERT or record.dynamodb is None:
        return
    event = events.payload_from_image(record.raw_event["dynamodb"]["NewImage"])
    count = webhook_fanout.fan_out(event, subscriptions)
    details = {"event_id": event["id"], "type": event["type"], "receivers": count}
    logger.info("event fanned out", extra=details)


@logger.inject_lambda_context
def handler(event: dict[str, Any], context: Any) -> PartialItemFailureResponse:
    # The receivers of each kind are read once for the batch (up to 100 events), not per event.
    subscriptions = webhook_fanout.Subscriptions()
    return process_partial_response(
        event=event,
        record_handler=lambda record: publish(record, subscriptions),
        processor=processor,
        context=context,
    )


coldstart.done()
