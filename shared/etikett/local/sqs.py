"""Polls the template's SQS event sources in-process and hands batches to their functions as
SQS events, with Lambda's semantics: deleted on success, retried (then redriven) on failure."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import boto3

from etikett.local.functions import FunctionRegistry
from etikett.local.pollers import Pollers
from etikett.local.provision import Resolver
from etikett.local.template import SqsSource

logger = logging.getLogger("etikett.sqs")


def sqs_event(messages: Sequence[Mapping[str, Any]], queue_arn: str, region: str) -> dict[str, Any]:
    return {
        "Records": [
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": message.get("Attributes", {}),
                "messageAttributes": {
                    name: {
                        "stringValue": value.get("StringValue"),
                        "binaryValue": value.get("BinaryValue"),
                        "stringListValues": [],
                        "binaryListValues": [],
                        "dataType": value["DataType"],
                    }
                    for name, value in message.get("MessageAttributes", {}).items()
                },
                "md5OfBody": message.get("MD5OfBody"),
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": region,
            }
            for message in messages
        ]
    }


class SqsPoller:
    def __init__(
        self,
        sources: list[SqsSource],
        resolver: Resolver,
        functions: FunctionRegistry,
        endpoint_url: str,
        region: str,
        wait_seconds: int = 1,
    ) -> None:
        self._sources = sources
        self._resolver = resolver
        self._functions = functions
        self._client = boto3.session.Session(region_name=region).client(
            "sqs", endpoint_url=endpoint_url
        )
        self._region = region
        self._wait = wait_seconds
        self._pollers: Pollers[SqsSource] = Pollers()
        self._stop = self._pollers.stopping

    def start(self) -> None:
        self._pollers.start(
            self._sources, self._run, lambda source: f"sqs-{source.function}-{source.queue}"
        )

    def stop(self) -> None:
        self._pollers.stop(timeout=self._wait + 5)

    def _run(self, source: SqsSource) -> None:
        url = self._resolver.refs[source.queue]
        arn = self._resolver.attributes[(source.queue, "Arn")]
        while not self._stop.is_set():
            try:
                self.poll_once(source, url, arn)
            except Exception:
                logger.exception("polling %s for %s failed", source.queue, source.function)
                self._stop.wait(1)

    def poll_once(self, source: SqsSource, url: str, arn: str) -> int:
        messages = self._client.receive_message(
            QueueUrl=url,
            MaxNumberOfMessages=min(source.batch_size, 10),
            WaitTimeSeconds=self._wait,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        ).get("Messages", [])
        if not messages:
            return 0
        try:
            result = self._functions.invoke(source.function, sqs_event(messages, arn, self._region))
        except Exception:
            # As on AWS: the whole batch becomes visible again after the visibility timeout.
            logger.exception("function %s failed on a batch of %d", source.function, len(messages))
            return 0
        failed: set[str] = set()
        if source.report_item_failures and isinstance(result, dict):
            failed = {item["itemIdentifier"] for item in result.get("batchItemFailures", [])}
        done = [m for m in messages if m["MessageId"] not in failed]
        for start in range(0, len(done), 10):
            self._client.delete_message_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]}
                    for i, m in enumerate(done[start : start + 10])
                ],
            )
        return len(done)
