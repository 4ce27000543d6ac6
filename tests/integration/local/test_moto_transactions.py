"""TransactWriteItems in local mode undoes a cancelled transaction item by item (instead of
moto's whole-table copies): whatever a cancelled transaction touched is as it was before,
including the table's stream, and a transaction that goes through lands completely."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError

from etikett.local.aws import LocalAws

REGION = "eu-central-1"


@pytest.fixture(scope="module")
def endpoint() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "testing")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        with LocalAws(None) as aws:
            yield aws.endpoint_url


def client(service: str, endpoint: str) -> Any:
    return boto3.client(
        service,
        region_name=REGION,
        endpoint_url=endpoint,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


@pytest.fixture
def tables(endpoint: str) -> tuple[str, str]:
    """A table with a stream (hash key only) and one with a range key, a few items each."""
    ddb = client("dynamodb", endpoint)
    suffix = uuid.uuid4().hex[:8]
    jobs, audit = f"jobs-{suffix}", f"audit-{suffix}"
    ddb.create_table(
        TableName=jobs,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    ddb.create_table(
        TableName=audit,
        KeySchema=[
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "at", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "at", "AttributeType": "N"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    for index in range(3):
        ddb.put_item(TableName=jobs, Item={"pk": {"S": f"job{index}"}, "status": {"S": "queued"}})
        ddb.put_item(
            TableName=audit, Item={"pk": {"S": "log"}, "at": {"N": str(index)}, "op": {"S": "x"}}
        )
    return jobs, audit


def contents(endpoint: str, table: str) -> list[dict[str, Any]]:
    items = client("dynamodb", endpoint).scan(TableName=table)["Items"]
    return sorted(items, key=repr)


def stream_records(endpoint: str, table: str) -> list[dict[str, Any]]:
    ddb = client("dynamodb", endpoint)
    streams = client("dynamodbstreams", endpoint)
    arn = ddb.describe_table(TableName=table)["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    return list(streams.get_records(ShardIterator=iterator)["Records"])


def test_a_cancelled_transaction_leaves_items_and_stream_as_they_were(
    endpoint: str, tables: tuple[str, str]
) -> None:
    jobs, audit = tables
    before = {name: contents(endpoint, name) for name in tables}
    records_before = len(stream_records(endpoint, jobs))
    with pytest.raises(ClientError) as cancelled:
        client("dynamodb", endpoint).transact_write_items(
            TransactItems=[
                {"Put": {"TableName": jobs, "Item": {"pk": {"S": "new"}}}},
                {
                    "Update": {
                        "TableName": jobs,
                        "Key": {"pk": {"S": "job0"}},
                        "UpdateExpression": "SET #s = :s",
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {":s": {"S": "running"}},
                    }
                },
                {"Delete": {"TableName": jobs, "Key": {"pk": {"S": "job1"}}}},
                {"Delete": {"TableName": audit, "Key": {"pk": {"S": "log"}, "at": {"N": "0"}}}},
                {
                    "Put": {
                        "TableName": audit,
                        "Item": {"pk": {"S": "log"}, "at": {"N": "9"}},
                    }
                },
                {
                    "Update": {
                        "TableName": jobs,
                        "Key": {"pk": {"S": "job2"}},
                        "UpdateExpression": "SET #s = :s",
                        "ConditionExpression": "#s = :expected",
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {
                            ":s": {"S": "sent"},
                            ":expected": {"S": "running"},
                        },
                    }
                },
            ]
        )
    error = cancelled.value.response["Error"]
    assert error["Code"] == "TransactionCanceledException"
    reasons = [r["Code"] for r in cancelled.value.response["CancellationReasons"]]
    assert reasons == ["None"] * 5 + ["ConditionalCheckFailed"]
    assert {name: contents(endpoint, name) for name in tables} == before
    assert len(stream_records(endpoint, jobs)) == records_before


def test_a_transaction_that_goes_through_lands_completely(
    endpoint: str, tables: tuple[str, str]
) -> None:
    jobs, audit = tables
    records_before = len(stream_records(endpoint, jobs))
    client("dynamodb", endpoint).transact_write_items(
        TransactItems=[
            {"Put": {"TableName": jobs, "Item": {"pk": {"S": "new"}}}},
            {
                "Update": {
                    "TableName": jobs,
                    "Key": {"pk": {"S": "job0"}},
                    "UpdateExpression": "SET #s = :s",
                    "ConditionExpression": "#s = :expected",
                    "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": {
                        ":s": {"S": "running"},
                        ":expected": {"S": "queued"},
                    },
                }
            },
            {"Delete": {"TableName": audit, "Key": {"pk": {"S": "log"}, "at": {"N": "1"}}}},
        ]
    )
    ddb = client("dynamodb", endpoint)
    assert "Item" in ddb.get_item(TableName=jobs, Key={"pk": {"S": "new"}})
    job0 = ddb.get_item(TableName=jobs, Key={"pk": {"S": "job0"}})["Item"]
    assert job0["status"] == {"S": "running"}
    assert [item["at"]["N"] for item in contents(endpoint, audit)] == ["0", "2"]
    new_records = stream_records(endpoint, jobs)[records_before:]
    assert [r["eventName"] for r in new_records] == ["INSERT", "MODIFY"]


def test_a_refused_transaction_changes_nothing(endpoint: str, tables: tuple[str, str]) -> None:
    """Two operations on one item: moto refuses the whole transaction (a validation error)
    after it has applied the first."""
    jobs = tables[0]
    before = {name: contents(endpoint, name) for name in tables}
    with pytest.raises(ClientError) as refused:
        client("dynamodb", endpoint).transact_write_items(
            TransactItems=[
                {"Put": {"TableName": jobs, "Item": {"pk": {"S": "job0"}, "status": {"S": "x"}}}},
                {"Delete": {"TableName": jobs, "Key": {"pk": {"S": "job0"}}}},
            ]
        )
    assert refused.value.response["Error"]["Code"] == "ValidationException"
    assert {name: contents(endpoint, name) for name in tables} == before
