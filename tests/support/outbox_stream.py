"""The events table's stream records of chosen outbox items, as Lambda hands them to the events
publisher: for tests that replay a record, or hand a batch over themselves."""

from __future__ import annotations

from typing import Any


def publisher_event(
    dynamodb: Any, streams: Any, table: str, event_ids: list[str], region: str
) -> dict[str, Any]:
    """`{"Records": [...]}` with the stream records of the events `event_ids`, in stream order."""
    arn = dynamodb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    wanted = set(event_ids)
    found = []
    for shard in streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]:
        iterator = streams.get_shard_iterator(
            StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType="TRIM_HORIZON"
        )["ShardIterator"]
        while iterator:
            answer = streams.get_records(ShardIterator=iterator, Limit=1000)
            for item in answer["Records"]:
                change = dict(item["dynamodb"])
                if change.get("NewImage", {}).get("id", {}).get("S") not in wanted:
                    continue
                # Lambda gives epoch seconds where GetRecords gives a time.
                created = change["ApproximateCreationDateTime"]
                change["ApproximateCreationDateTime"] = int(created.timestamp())
                found.append(
                    {
                        "eventID": item["eventID"],
                        "eventName": item["eventName"],
                        "eventVersion": "1.1",
                        "eventSource": "aws:dynamodb",
                        "awsRegion": region,
                        "dynamodb": change,
                        "eventSourceARN": arn,
                    }
                )
            iterator = answer.get("NextShardIterator") if answer["Records"] else None
    assert len(found) == len(wanted), f"{len(found)} of {len(wanted)} events in the stream"
    return {"Records": found}
