"""Local AWS answers JSON-protocol calls of DynamoDB, its streams and SQS without Flask
(moto_json_protocol): the same answers as through moto's app, for what the service and the Runner
send and for moto's refusals, with session credentials still narrowed by their policy."""

from __future__ import annotations

import json
import re
import urllib.request
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.exceptions import ClientError
from moto.moto_api._internal import mock_random

from etikett.local.aws import LocalAws, gateway
from etikett.local.moto_json_protocol import DirectJsonApp

REGION = "eu-central-1"
ACCOUNT = "123456789012"
# Values that hold the time of the request (the two paths run seconds apart), the stream's ARN
# and label, made of the table's creation time, and a stream record's size, which counts the
# digits of its creation time.
_TIMED = re.compile(
    r"(Time|Date|Timestamp|Expiration|StreamLabel|StreamArn|ShardIterator|^SizeBytes)$"
)
_TIMED_IN_TEXT = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?")
_ENDPOINT = re.compile(rb"http://127\.0\.0\.1:\d+")  # each local AWS its own port
_Exchange = tuple[str, int, dict[str, str], bytes]
# What the service and the Runner call (store/, local/, the Runner's queue), and two requests no
# SDK would send.
_DYNAMODB = {
    *("CreateTable", "UpdateTimeToLive", "DescribeTable", "ListTables", "PutItem", "GetItem"),
    *("UpdateItem", "DeleteItem", "BatchWriteItem", "BatchGetItem", "Query", "Scan"),
    *("TransactWriteItems", "TransactGetItems"),
}
_OPERATIONS = {
    *_DYNAMODB,
    *("ListStreams", "DescribeStream", "GetShardIterator", "GetRecords"),
    *("CreateQueue", "GetQueueUrl", "GetQueueAttributes", "SendMessage", "SendMessageBatch"),
    *("ReceiveMessage", "ChangeMessageVisibility", "DeleteMessage", "DeleteMessageBatch"),
    *("DynamoDB_20120810.GetItem", "DynamoDB_20120810.NoSuchOperation"),
}


@pytest.fixture(autouse=True)
def credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SESSION_TOKEN": "testing",
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE"):
        monkeypatch.delenv(name, raising=False)


@contextmanager
def _local_aws(direct: bool) -> Iterator[tuple[LocalAws, list[_Exchange]]]:
    """A fresh local AWS answering through the direct path or moto's app, and the exchanges of
    the clients of `_client` (each request's randomness seeded by its position)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DirectJsonApp, "enabled", direct)
        with LocalAws(None) as aws:
            yield aws, []


def _client(
    aws: LocalAws, seen: list[_Exchange], service: str, *, compared: bool = True, **keys: str
) -> Any:
    client = boto3.client(
        service,
        region_name=REGION,
        endpoint_url=aws.endpoint_url,
        config=Config(retries={"total_max_attempts": 1}, parameter_validation=False),
        **keys,
    )

    def seed(**_: Any) -> None:
        mock_random.seed(len(seen))  # request ids, message ids, receipts: alike on both paths

    def record(http_response: Any, model: Any, **_: Any) -> None:
        headers = {name.lower(): value for name, value in http_response.headers.items()}
        seen.append((model.name, http_response.status_code, headers, http_response.content))

    if compared:
        client.meta.events.register("before-send", seed)
        client.meta.events.register("after-call", record)
    return client


def _refused(call: Callable[[], Any]) -> str:
    with pytest.raises(ClientError) as refused:
        call()
    return str(refused.value.response["Error"]["Code"])


def _refused_with(call: Callable[[], Any]) -> int:
    with pytest.raises(ClientError) as refused:
        call()
    return int(refused.value.response["ResponseMetadata"]["HTTPStatusCode"])


def _raw(aws: LocalAws, seen: list[_Exchange], target: str, body: bytes) -> None:
    """A SigV4-signed DynamoDB request with any body (botocore would not send it)."""
    request = AWSRequest(
        method="POST",
        url=aws.endpoint_url + "/",
        data=body,
        headers={"X-Amz-Target": target, "Content-Type": "application/x-amz-json-1.0"},
    )
    credentials = boto3.Session().get_credentials()
    assert credentials is not None
    SigV4Auth(credentials, "dynamodb", REGION).add_auth(request)
    mock_random.seed(len(seen))
    prepared = request.prepare()
    sent = urllib.request.Request(
        prepared.url, data=body, headers=dict(prepared.headers), method="POST"
    )
    try:
        with urllib.request.urlopen(sent, timeout=30) as answer:
            status, headers, content = answer.status, answer.headers, answer.read()
    except urllib.error.HTTPError as error:
        status, headers, content = error.code, error.headers, error.read()
    seen.append((target, status, {k.lower(): v for k, v in headers.items()}, content))


def _dynamodb_calls(aws: LocalAws, seen: list[_Exchange]) -> None:
    db = _client(aws, seen, "dynamodb")
    db.create_table(
        TableName="jobs",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "printer", "AttributeType": "S"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-printer",
                "KeySchema": [{"AttributeName": "printer", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )
    db.update_time_to_live(
        TableName="jobs", TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"}
    )
    db.describe_table(TableName="jobs")
    db.list_tables()
    item = {"pk": {"S": "job#1"}, "printer": {"S": "p1"}, "n": {"N": "1"}, "b": {"B": b"\x00\xff"}}
    db.put_item(TableName="jobs", Item=item, ConditionExpression="attribute_not_exists(pk)")
    assert "ConditionalCheckFailed" in _refused(
        lambda: db.put_item(
            TableName="jobs",
            Item=item,
            ConditionExpression="attribute_not_exists(pk)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    )
    key = {"pk": {"S": "job#1"}}
    db.get_item(TableName="jobs", Key=key, ConsistentRead=True)
    db.update_item(
        TableName="jobs",
        Key=key,
        UpdateExpression="SET #s = :s ADD n :one",
        ConditionExpression="attribute_exists(pk)",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":s": {"S": "sent"}, ":one": {"N": "1"}},
        ReturnValues="ALL_NEW",
    )
    assert "ConditionalCheckFailed" in _refused(
        lambda: db.update_item(
            TableName="jobs",
            Key=key,
            UpdateExpression="SET #s = :s",
            ConditionExpression="#s = :was",
            ExpressionAttributeNames={"#s": "status"},
            ExpressionAttributeValues={":s": {"S": "done"}, ":was": {"S": "queued"}},
        )
    )
    db.batch_write_item(
        RequestItems={
            "jobs": [
                {"PutRequest": {"Item": {"pk": {"S": f"job#{n}"}, "printer": {"S": "p1"}}}}
                for n in range(2, 6)
            ]
        }
    )
    db.batch_get_item(RequestItems={"jobs": {"Keys": [key, {"pk": {"S": "job#2"}}]}})
    db.query(
        TableName="jobs",
        IndexName="by-printer",
        KeyConditionExpression="printer = :p",
        FilterExpression="attribute_not_exists(#s)",
        ExpressionAttributeNames={"#s": "status"},
        ExpressionAttributeValues={":p": {"S": "p1"}},
        Limit=2,
    )
    db.scan(TableName="jobs", Limit=3)
    db.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": "jobs",
                    "Item": {"pk": {"S": "job#9"}},
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "Update": {
                    "TableName": "jobs",
                    "Key": key,
                    "UpdateExpression": "SET #s = :s",
                    "ExpressionAttributeNames": {"#s": "status"},
                    "ExpressionAttributeValues": {":s": {"S": "confirmed"}},
                }
            },
            {"Delete": {"TableName": "jobs", "Key": {"pk": {"S": "job#5"}}}},
        ]
    )
    assert "TransactionCanceled" in _refused(
        lambda: db.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": "jobs",
                        "Item": {"pk": {"S": "job#9"}},
                        "ConditionExpression": "attribute_not_exists(pk)",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
                {
                    "ConditionCheck": {
                        "TableName": "jobs",
                        "Key": key,
                        "ConditionExpression": "n = :x",
                        "ExpressionAttributeValues": {":x": {"N": "2"}},
                    }
                },
            ]
        )
    )
    db.transact_get_items(TransactItems=[{"Get": {"TableName": "jobs", "Key": key}}])
    db.delete_item(TableName="jobs", Key={"pk": {"S": "job#4"}}, ReturnValues="ALL_OLD")
    assert _refused(lambda: db.get_item(TableName="jobs", Key={"id": {"S": "x"}})) == (
        "ValidationException"
    )
    assert _refused(
        lambda: db.update_item(TableName="jobs", Key=key, UpdateExpression="SET = oops")
    ) == ("ValidationException")
    assert _refused(lambda: db.get_item(TableName="missing", Key=key)) == (
        "ResourceNotFoundException"
    )
    _raw(aws, seen, "DynamoDB_20120810.GetItem", b'{"TableName": "jobs", "Key": ')
    _raw(aws, seen, "DynamoDB_20120810.NoSuchOperation", b"{}")


def _stream_calls(aws: LocalAws, seen: list[_Exchange]) -> None:
    streams = _client(aws, seen, "dynamodbstreams")
    arn = streams.list_streams(TableName="jobs")["Streams"][0]["StreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    iterator = streams.get_shard_iterator(
        StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON"
    )["ShardIterator"]
    streams.get_records(ShardIterator=iterator, Limit=3)
    streams.describe_stream(StreamArn=arn + "x")  # moto answers with nothing found


def _sqs_calls(aws: LocalAws, seen: list[_Exchange]) -> None:
    sqs = _client(aws, seen, "sqs")
    url = sqs.create_queue(QueueName="runner-a", Attributes={"VisibilityTimeout": "30"})["QueueUrl"]
    other = sqs.create_queue(QueueName="runner-b")["QueueUrl"]
    sqs.get_queue_url(QueueName="runner-a")
    sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn", "VisibilityTimeout"])
    sqs.send_message(
        QueueUrl=url,
        MessageBody='{"job_id": "j1"}',
        MessageAttributes={"kind": {"DataType": "String", "StringValue": "job"}},
    )
    sqs.send_message_batch(
        QueueUrl=url,
        Entries=[{"Id": str(n), "MessageBody": f'{{"n": {n}}}'} for n in range(3)],
    )
    received = sqs.receive_message(
        QueueUrl=url,
        MaxNumberOfMessages=10,
        WaitTimeSeconds=0,
        MessageAttributeNames=["All"],
        MessageSystemAttributeNames=["ApproximateReceiveCount"],
    )["Messages"]
    receipts = [message["ReceiptHandle"] for message in received]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=receipts[0], VisibilityTimeout=0)
    sqs.delete_message(QueueUrl=url, ReceiptHandle=receipts[1])
    sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[{"Id": "a", "ReceiptHandle": receipts[2]}, {"Id": "b", "ReceiptHandle": "bad"}],
    )
    assert "ReceiptHandleIsInvalid" in _refused(
        lambda: sqs.change_message_visibility(
            QueueUrl=url, ReceiptHandle="bad", VisibilityTimeout=5
        )
    )
    assert "NonExistentQueue" in _refused(
        lambda: sqs.send_message(QueueUrl=url + "-gone", MessageBody="x")
    )
    assert _refused(lambda: sqs.send_message_batch(QueueUrl=url, Entries=[])) != ""
    assert (
        _refused(
            lambda: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=11, WaitTimeSeconds=0)
        )
        != ""
    )
    # A Runner's session credentials: its own queue, nothing else (moto_sessions). (IAM's and
    # STS's answers are not compared: new keys each time, through moto's app on both paths.)
    iam = _client(aws, seen, "iam", compared=False)
    sts = _client(aws, seen, "sts", compared=False)
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {"Effect": "Allow", "Principal": {"AWS": ACCOUNT}, "Action": "sts:AssumeRole"}
        ],
    }
    role = iam.create_role(RoleName="runner-queue", AssumeRolePolicyDocument=json.dumps(trust))
    allow_sqs = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "sqs:*", "Resource": "*"}],
    }
    iam.put_role_policy(
        RoleName="runner-queue", PolicyName="sqs", PolicyDocument=json.dumps(allow_sqs)
    )
    queue_a = f"arn:aws:sqs:{REGION}:{ACCOUNT}:runner-a"
    narrowed = {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "sqs:ReceiveMessage", "Resource": queue_a}],
    }
    granted = sts.assume_role(
        RoleArn=role["Role"]["Arn"], RoleSessionName="runner", Policy=json.dumps(narrowed)
    )["Credentials"]
    runner = _client(
        aws,
        seen,
        "sqs",
        aws_access_key_id=granted["AccessKeyId"],
        aws_secret_access_key=granted["SecretAccessKey"],
        aws_session_token=granted["SessionToken"],
    )
    runner.receive_message(QueueUrl=url, WaitTimeSeconds=0, VisibilityTimeout=0)
    assert _refused_with(lambda: runner.receive_message(QueueUrl=other)) == 403
    assert _refused_with(lambda: runner.send_message(QueueUrl=url, MessageBody="x")) == 403


def _exchanges(direct: bool) -> list[_Exchange]:
    with _local_aws(direct) as (aws, seen):
        _dynamodb_calls(aws, seen)
        _stream_calls(aws, seen)
        _sqs_calls(aws, seen)
    return seen


def _untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "<time>" if _TIMED.search(k) else _untimed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    if isinstance(value, str):
        return _TIMED_IN_TEXT.sub("<time>", value)
    return value


def _comparable(exchange: _Exchange) -> tuple[Any, ...]:
    name, status, headers, body = exchange
    body = _ENDPOINT.sub(b"<endpoint>", body)
    try:
        content: Any = _untimed(json.loads(body))
    except ValueError:
        content = _TIMED_IN_TEXT.sub("<time>", body.decode())
    # Date changes by the second; the length and CRC32 with the times in the body.
    kept = {k: v for k, v in headers.items() if k not in ("date", "content-length", "x-amz-crc32")}
    return name, status, kept, content


def test_both_paths_give_moto_s_answers() -> None:
    through_moto, direct = _exchanges(direct=False), _exchanges(direct=True)
    assert [e[0] for e in direct] == [e[0] for e in through_moto]
    for moto_answer, direct_answer in zip(through_moto, direct, strict=True):
        assert _comparable(direct_answer) == _comparable(moto_answer)
        name, status, headers, body = direct_answer
        assert headers["content-length"] == str(len(body))
        if status < 500:  # moto's own failures (an unknown operation) come without one
            assert headers["x-amzn-requestid"], name
        assert ("x-amz-crc32" in headers) == ("x-amz-crc32" in moto_answer[2])
        if name in _DYNAMODB and status < 500:  # moto's DynamoDB answers carry a CRC32
            assert headers["x-amz-crc32"] == str(zlib.crc32(body))
    # What the comparison covered: every operation above, successes and refusals.
    assert {name for name, *_ in direct} == _OPERATIONS
    assert {status for _, status, *_ in direct} == {200, 400, 403, 500}


def test_json_calls_skip_moto_s_app_and_the_rest_go_through_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    reached: list[str] = []
    dispatch = gateway._Dispatcher.__call__

    def counted(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        reached.append(environ.get("HTTP_X_AMZ_TARGET") or environ["REQUEST_METHOD"])
        return dispatch(self, environ, start_response)

    monkeypatch.setattr(gateway._Dispatcher, "__call__", counted)
    with _local_aws(direct=True) as (aws, seen):
        db = _client(aws, seen, "dynamodb")
        db.list_tables()
        sqs = _client(aws, seen, "sqs")
        sqs.list_queues()
        assert reached == []
        s3 = _client(aws, seen, "s3")
        s3.list_buckets()
        _client(aws, seen, "sts").get_caller_identity()
        for header in ("Origin", "Access-Control-Request-Private-Network"):  # flask-cors's
            browser = _client(aws, seen, "dynamodb")
            browser.meta.events.register(
                "before-sign.dynamodb.*",
                lambda request, header=header, **_: request.headers.add_header(header, "true"),
            )
            browser.list_tables()
    assert reached == ["GET", "POST", *["DynamoDB_20120810.ListTables"] * 2]
