"""Local AWS's processor time per DynamoDB call of the kinds a print makes, in one process.

    .venv/bin/python bench/local_aws_calls.py [--rounds 300]

A local AWS (moto's server with local mode's patches) in this process and a boto3 client; each
round is a TransactWriteItems of a job's shape (a Put under a condition and two Updates of
several attributes), an UpdateItem with a condition, a GetItem and a Query. Prints processor time
per call of the server's threads (and with the client's), which is what moto's patches change,
without the noise of a whole print's processes.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

UPDATE = "SET #0 = :0, #1 = :1, #2 = :2, #3 = if_not_exists(#3, :3) ADD #4 :4 REMOVE #5"
NAMES = {"#0": "status", "#1": "updated", "#2": "printer", "#3": "created", "#4": "n", "#5": "x"}


def _values(index: int) -> dict[str, Any]:
    return {
        ":0": {"S": "sent"},
        ":1": {"S": f"2026-11-28T09:00:{index % 60:02d}Z"},
        ":2": {"S": "sim"},
        ":3": {"S": "2026-11-28"},
        ":4": {"N": "1"},
    }


def round_trip(client: Any, index: int) -> int:
    """One round of calls; how many calls it made."""
    key = {"pk": {"S": f"job#{index}"}, "sk": {"S": "job"}}
    client.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": "bench",
                    "Item": {"pk": {"S": f"job#{index}"}, "sk": {"S": "entry"}, "v": {"S": "x"}},
                    "ConditionExpression": "attribute_not_exists(#k)",
                    "ExpressionAttributeNames": {"#k": "pk"},
                }
            },
            {
                "Update": {
                    "TableName": "bench",
                    "Key": key,
                    "UpdateExpression": UPDATE,
                    "ExpressionAttributeNames": NAMES,
                    "ExpressionAttributeValues": _values(index),
                }
            },
            {
                "Update": {
                    "TableName": "bench",
                    "Key": {"pk": {"S": "counter"}, "sk": {"S": "serial"}},
                    "UpdateExpression": UPDATE,
                    "ExpressionAttributeNames": NAMES,
                    "ExpressionAttributeValues": _values(index),
                }
            },
        ]
    )
    client.update_item(
        TableName="bench",
        Key=key,
        UpdateExpression="SET #0 = :0, #1 = :1",
        ConditionExpression="#0 = :was",
        ExpressionAttributeNames={"#0": "status", "#1": "updated"},
        ExpressionAttributeValues={
            ":0": {"S": "confirmed"},
            ":1": {"S": "t"},
            ":was": {"S": "sent"},
        },
    )
    client.get_item(TableName="bench", Key=key)
    client.query(
        TableName="bench",
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": f"job#{index}"}},
    )
    return 4


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=300)
    arguments = parser.parse_args()
    os.environ.setdefault("AWS_ACCESS_KEY_ID", "testing")
    os.environ.setdefault("AWS_SECRET_ACCESS_KEY", "testing")
    from support.local_dynamodb import table_client

    with table_client("bench", {"pk": "S", "sk": "S"}) as client:
        for index in range(20):  # warm: the first clients, parses and imports
            round_trip(client, 10_000_000 + index)
        calls, started, client_started = 0, time.process_time(), time.thread_time()
        for index in range(arguments.rounds):
            calls += round_trip(client, index)
        spent = time.process_time() - started
        server = spent - (time.thread_time() - client_started)  # the server's threads
    print(
        f"local AWS in process, {arguments.rounds} rounds of TransactWriteItems (Put + 2 Updates), "
        f"UpdateItem, GetItem, Query: {server / calls * 1000:.2f} ms of local AWS's processor "
        f"time per call ({spent / calls * 1000:.2f} ms with the client's), "
        f"{server / arguments.rounds * 1000:.2f} ms per round"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
