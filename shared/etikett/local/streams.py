"""Polls the template's DynamoDB stream event sources in process and hands batches to their
functions as Lambda's DynamoDB stream events, with Lambda's semantics: records in order per shard,
a failed batch retried (from its first failed record, with ReportBatchItemFailures) until it
succeeds or `MaximumRetryAttempts` is spent.

How far each shard was handed over is checkpointed (stream_checkpoints.py), so that a restart
neither loses nor replays records. For moto, GetShardIterator and GetRecords change state: each
call stores a new shard iterator, for good, and makes the next snapshot of local AWS necessary.
Asking every tenth of a second would grow the state without end and snapshot it every second. So
the poller reads the wire only when a shard has new records, which it learns from moto's memory in
this process (`moto_shard_end`).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

import boto3

from etikett.local.functions import FunctionRegistry
from etikett.local.pollers import Pollers
from etikett.local.provision import Resolver
from etikett.local.stream_checkpoints import Checkpoints
from etikett.local.template import LOCAL_ACCOUNT, DynamoDBSource

logger = logging.getLogger("etikett.streams")

ShardEnd = Callable[[str], "int | None"]


def moto_shard_end(region: str, account: str = LOCAL_ACCOUNT) -> ShardEnd:
    """For moto's server in this process: the last sequence number in a table's stream (0 while it
    is empty; None if moto has no such stream here), read from memory without a request."""
    # moto's models load in the process that runs moto, not in `etikett dev`'s.
    from moto.dynamodb.models import dynamodb_backends

    def shard_end(table_name: str) -> int | None:
        # dict.get: indexing would create backends as a side effect.
        regions = dict.get(dynamodb_backends, account)
        backend = dict.get(regions, region) if regions is not None else None
        table = backend.tables.get(table_name) if backend is not None else None
        shard = getattr(table, "stream_shard", None)
        if shard is None:
            return None
        count = len(shard.items)
        return int(shard.starting_sequence_number) + count - 1 if count else 0

    return shard_end


class StreamPoller:
    def __init__(
        self,
        sources: list[DynamoDBSource],
        resolver: Resolver,
        functions: FunctionRegistry,
        endpoint_url: str,
        region: str,
        checkpoints: Checkpoints,
        *,
        shard_end: ShardEnd | None = None,
        interval: float = 0.1,
    ) -> None:
        self._sources = sources
        self._resolver = resolver
        self._functions = functions
        self._region = region
        self._checkpoints = checkpoints
        self._shard_end = shard_end
        # Without a way to see new records, each look is a GetRecords call: look less often.
        self._interval = interval if shard_end is not None else max(interval, 1.0)
        session = boto3.session.Session(region_name=region)
        self._dynamodb = session.client("dynamodb", endpoint_url=endpoint_url)
        self._streams = session.client("dynamodbstreams", endpoint_url=endpoint_url)
        self._pollers: Pollers[DynamoDBSource] = Pollers()
        self._stop = self._pollers.stopping
        self._iterators: dict[tuple[str, str], str] = {}
        self._verified: set[tuple[str, str]] = set()
        self._failures: dict[tuple[str, str], int] = {}

    def start(self) -> None:
        self._pollers.start(
            self._sources, self._run, lambda source: f"dynamodb-{source.function}-{source.table}"
        )

    def stop(self) -> None:
        """Stop after the batches in hand, then mark the checkpoints exact."""
        if self._pollers.stop(timeout=60):
            self._checkpoints.close()
        else:
            logger.error("a stream poller is still busy; its checkpoints stay marked unclean")

    def _run(self, source: DynamoDBSource) -> None:
        table = self._resolver.refs[source.table]
        stream: tuple[str, list[str]] | None = None
        listed = 0.0
        while not self._stop.is_set():
            try:
                # Shards change rarely (never in moto); look again now and then.
                if stream is None or time.monotonic() - listed > 30:
                    stream, listed = self._describe(table), time.monotonic()
                arn, shard_ids = stream
                busy = False
                for shard_id in shard_ids:
                    busy = self.poll_shard(source, table, arn, shard_id) or busy
            except Exception:
                logger.exception("polling the stream of %s for %s failed", table, source.function)
                stream = None
                self._iterators.clear()
                self._stop.wait(1)
                continue
            if not busy:
                self._stop.wait(self._interval)

    def _describe(self, table: str) -> tuple[str, list[str]]:
        described = self._dynamodb.describe_table(TableName=table)["Table"]
        arn = described["LatestStreamArn"]
        self._checkpoints.retain(described["TableArn"], arn)
        shards = self._streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
        return arn, [shard["ShardId"] for shard in shards]

    # --- one shard ----------------------------------------------------------------------------

    def poll_shard(self, source: DynamoDBSource, table: str, arn: str, shard_id: str) -> bool:
        """Hand the shard's next batch to the function; whether there was one."""
        key = (arn, shard_id)
        if not self._checkpoints.known(arn, shard_id):
            self._begin(source, arn, shard_id)
        elif key not in self._verified:
            self._verify(arn, shard_id)
        self._verified.add(key)
        position = self._checkpoints.position(arn, shard_id)
        if self._shard_end is not None:
            end = self._shard_end(table)
            if end is not None and end <= (int(position) if position is not None else 0):
                return False
        iterator = self._iterators.pop(key, None) or self._iterator(arn, shard_id, position)
        limit = min(source.batch_size, 1000)
        answer = self._streams.get_records(ShardIterator=iterator, Limit=limit)
        records = answer.get("Records", [])
        following = answer.get("NextShardIterator")
        if not records:
            if following:
                self._iterators[key] = following
            return False
        failed = self._invoke(source, arn, records)
        if failed is None:
            self._checkpoints.advance(arn, shard_id, _sequence(records[-1]))
            self._failures.pop(key, None)
            if following:
                self._iterators[key] = following
            return True
        # Lambda checkpoints before the first failed record and retries from there.
        if failed > 0:
            self._checkpoints.advance(arn, shard_id, _sequence(records[failed - 1]))
        tries = self._failures[key] = self._failures.get(key, 0) + 1
        if 0 <= source.maximum_retry_attempts < tries:
            logger.error(
                "%s failed %d times on records %s..%s of %s; skipping them (MaximumRetryAttempts)",
                source.function,
                tries,
                _sequence(records[failed]),
                _sequence(records[-1]),
                arn,
            )
            self._checkpoints.advance(arn, shard_id, _sequence(records[-1]))
            self._failures.pop(key, None)
            if following:
                self._iterators[key] = following
            return True
        self._stop.wait(min(0.5 * 2 ** (tries - 1), 30.0))
        return True

    def _iterator(self, arn: str, shard_id: str, position: str | None) -> str:
        if position is None:
            kind: dict[str, str] = {"ShardIteratorType": "TRIM_HORIZON"}
        else:
            kind = {"ShardIteratorType": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": position}
        answer = self._streams.get_shard_iterator(StreamArn=arn, ShardId=shard_id, **kind)
        return str(answer["ShardIterator"])

    def _last_sequence(self, arn: str, shard_id: str) -> str | None:
        """Read the shard to its end; its last sequence number (None: empty)."""
        last = None
        iterator: str | None = self._iterator(arn, shard_id, None)
        while iterator:
            answer = self._streams.get_records(ShardIterator=iterator, Limit=1000)
            if not answer.get("Records"):
                break
            last = _sequence(answer["Records"][-1])
            iterator = answer.get("NextShardIterator")
        return last

    def _begin(self, source: DynamoDBSource, arn: str, shard_id: str) -> None:
        position = None
        if source.starting_position == "LATEST":
            position = self._last_sequence(arn, shard_id)
        self._checkpoints.begin(arn, shard_id, position)

    def _verify(self, arn: str, shard_id: str) -> None:
        """After a restart: is the checkpointed record in the restored state? If not (the state
        is older than the checkpoint), its sequence numbers will be used again: resume after the
        last record there is."""
        position = self._checkpoints.position(arn, shard_id)
        if position is None:
            return
        with contextlib.suppress(Exception):
            answer = self._streams.get_records(
                ShardIterator=self._streams.get_shard_iterator(
                    StreamArn=arn,
                    ShardId=shard_id,
                    ShardIteratorType="AT_SEQUENCE_NUMBER",
                    SequenceNumber=position,
                )["ShardIterator"],
                Limit=1,
            )
            if [_sequence(r) for r in answer.get("Records", [])] == [position]:
                return
        last = self._last_sequence(arn, shard_id)
        logger.warning(
            "%s %s: checkpoint %s is not in the restored state; resuming after %s",
            arn,
            shard_id,
            position,
            last,
        )
        self._checkpoints.begin(arn, shard_id, last)

    def _invoke(
        self, source: DynamoDBSource, arn: str, records: list[dict[str, Any]]
    ) -> int | None:
        """Hand the batch over; None if it succeeded, else the index of its first failed record."""
        event = {"Records": [self._lambda_record(record, arn) for record in records]}
        try:
            result = self._functions.invoke(source.function, event)
        except Exception:
            logger.exception("function %s failed on a batch of %d", source.function, len(records))
            return 0
        if not source.report_item_failures or not isinstance(result, dict):
            return None
        failures = result.get("batchItemFailures") or []
        if not failures:
            return None
        index = {_sequence(record): i for i, record in enumerate(records)}
        identifiers = [failure.get("itemIdentifier") for failure in failures]
        if not all(identifier in index for identifier in identifiers):
            return 0  # as Lambda: an unknown identifier fails the whole batch
        return min(index[identifier] for identifier in identifiers)

    def _lambda_record(self, record: dict[str, Any], arn: str) -> dict[str, Any]:
        """A GetRecords record as Lambda passes it: region, source ARN, epoch seconds."""
        change = dict(record["dynamodb"])
        created = change.get("ApproximateCreationDateTime")
        if isinstance(created, datetime):
            change["ApproximateCreationDateTime"] = int(created.timestamp())
        return {
            "eventID": record["eventID"],
            "eventName": record["eventName"],
            "eventVersion": "1.1",
            "eventSource": "aws:dynamodb",
            "awsRegion": self._region,
            "dynamodb": change,
            "eventSourceARN": arn,
        }


def _sequence(record: dict[str, Any]) -> str:
    return str(record["dynamodb"]["SequenceNumber"])
