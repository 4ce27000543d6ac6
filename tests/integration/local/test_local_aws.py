"""LocalAws: moto state that survives a fresh process, with real boto3 over HTTP.

Persistence can only be proven across processes, so this file doubles as the server script
(`python test_local_aws.py serve STATE_FILE INTERVAL`): the restart test starts it with
subprocess and is only the client of the data it checks. The other tests run LocalAws in
this process.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import pickle
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import boto3
import moto
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from etikett.local.aws import LocalAws

REGION = "eu-central-1"
SHARED_DIR = Path(__file__).resolve().parents[3] / "shared"
DUMMY_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_SESSION_TOKEN": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}
# Settings that would send boto3 elsewhere than the endpoint under test.
UNSET_ENV = ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE")


@pytest.fixture(autouse=True)
def dummy_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in DUMMY_ENV.items():
        monkeypatch.setenv(name, value)
    for name in UNSET_ENV:
        monkeypatch.delenv(name, raising=False)


def client(service: str, endpoint_url: str) -> Any:
    # No retries: a retried call could hide a request the server got wrong.
    config = Config(retries={"total_max_attempts": 1}, read_timeout=60)
    return boto3.client(service, endpoint_url=endpoint_url, region_name=REGION, config=config)


def subprocess_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in UNSET_ENV}
    env.update(DUMMY_ENV)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SHARED_DIR), env.get("PYTHONPATH")]))
    return env


class ServerProcess:
    """A LocalAws serving from `state_file` in a fresh Python process."""

    def __init__(self, state_file: Path, snapshot_interval: float = 3600.0) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "serve", str(state_file), str(snapshot_interval)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=subprocess_env(),
            text=True,
        )

    def endpoint_url(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        if not line.startswith("http://"):
            self.proc.kill()
            pytest.fail(f"server process did not start (exit code {self.proc.wait()})")
        return line

    def stop(self) -> None:
        """Graceful stop: LocalAws.stop() writes the final snapshot."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        was_running = self.proc.poll() is None
        self.proc.stdin.close()
        code = self.proc.wait(timeout=30)
        self.proc.stdout.close()
        # A process that died earlier has already failed the test; don't mask that.
        assert code == 0 or not was_running, f"server process exited with {code}"

    def kill(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.kill()
        self.proc.wait(timeout=30)
        self.proc.stdin.close()
        self.proc.stdout.close()


@contextmanager
def server_process(state_file: Path, snapshot_interval: float = 3600.0) -> Iterator[str]:
    server = ServerProcess(state_file, snapshot_interval)
    try:
        yield server.endpoint_url()
    finally:
        server.stop()


# --- persistence across processes ------------------------------------------------------------


def populate(endpoint: str) -> dict[str, Any]:
    """Create one of everything; return what the checks after the restart need."""
    ddb = client("dynamodb", endpoint)
    ddb.create_table(
        TableName="labels",
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "printer", "AttributeType": "S"},
            {"AttributeName": "created", "AttributeType": "N"},
        ],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "by-printer",
                "KeySchema": [
                    {"AttributeName": "printer", "KeyType": "HASH"},
                    {"AttributeName": "created", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            }
        ],
    )
    for pk, printer, created in [("l1", "p1", 2), ("l2", "p2", 1), ("l3", "p1", 1)]:
        ddb.put_item(
            TableName="labels",
            Item={"pk": {"S": pk}, "printer": {"S": printer}, "created": {"N": str(created)}},
            ConditionExpression="attribute_not_exists(pk)",
        )

    sqs = client("sqs", endpoint)
    dlq_url = sqs.create_queue(QueueName="print-jobs-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq_url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    redrive = {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": "3"}
    queue_url = sqs.create_queue(
        QueueName="print-jobs", Attributes={"RedrivePolicy": json.dumps(redrive)}
    )["QueueUrl"]
    sqs.send_message(QueueUrl=queue_url, MessageBody="in-flight")
    received = sqs.receive_message(QueueUrl=queue_url, VisibilityTimeout=600)["Messages"]
    assert [m["Body"] for m in received] == ["in-flight"]
    sqs.send_message(QueueUrl=queue_url, MessageBody="visible")

    s3 = client("s3", endpoint)
    s3.create_bucket(
        Bucket="etikett-artifacts", CreateBucketConfiguration={"LocationConstraint": REGION}
    )
    blob = os.urandom(300_000)
    s3.put_object(
        Bucket="etikett-artifacts", Key="labels/l1.pdf", Body=blob, Metadata={"kind": "label"}
    )
    s3.put_bucket_versioning(
        Bucket="etikett-artifacts", VersioningConfiguration={"Status": "Enabled"}
    )
    s3.put_object(Bucket="etikett-artifacts", Key="templates/t1.json", Body=b"v1")
    s3.put_object(Bucket="etikett-artifacts", Key="templates/t1.json", Body=b"v2")

    kms = client("kms", endpoint)
    key_id = kms.create_key()["KeyMetadata"]["KeyId"]
    kms.create_alias(AliasName="alias/etikett", TargetKeyId=key_id)
    ciphertext = kms.encrypt(
        KeyId="alias/etikett", Plaintext=b"printer secret", EncryptionContext={"tenant": "t1"}
    )["CiphertextBlob"]
    sign_key_id = kms.create_key(KeyUsage="SIGN_VERIFY", KeySpec="ECC_NIST_P256")["KeyMetadata"][
        "KeyId"
    ]
    signature = kms.sign(KeyId=sign_key_id, Message=b"label", SigningAlgorithm="ECDSA_SHA_256")[
        "Signature"
    ]

    secrets = client("secretsmanager", endpoint)
    secrets.create_secret(Name="etikett/printer-token", SecretString="s3cr3t")
    # SSM keeps its parameters in a defaultdict subclass and its tags in lambda defaultdicts.
    ssm = client("ssm", endpoint)
    ssm.put_parameter(
        Name="/etikett/feature", Value="on", Type="String", Tags=[{"Key": "k", "Value": "v"}]
    )

    return {
        "receipt_handle": received[0]["ReceiptHandle"],
        "redrive": redrive,
        "blob": blob,
        "ciphertext": ciphertext,
        "sign_key_id": sign_key_id,
        "signature": signature,
        "public_key": kms.get_public_key(KeyId=sign_key_id)["PublicKey"],
    }


def check_restored(endpoint: str, before: dict[str, Any]) -> None:
    ddb = client("dynamodb", endpoint)
    by_printer = ddb.query(
        TableName="labels",
        IndexName="by-printer",
        KeyConditionExpression="printer = :p",
        ExpressionAttributeValues={":p": {"S": "p1"}},
    )["Items"]
    assert [item["pk"]["S"] for item in by_printer] == ["l3", "l1"]
    with pytest.raises(ClientError) as refused:
        ddb.put_item(
            TableName="labels",
            Item={"pk": {"S": "l1"}, "printer": {"S": "p9"}, "created": {"N": "9"}},
            ConditionExpression="attribute_not_exists(pk)",
        )
    assert refused.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    ddb.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": "labels",
                    "Item": {"pk": {"S": "l4"}, "printer": {"S": "p1"}, "created": {"N": "3"}},
                    "ConditionExpression": "attribute_not_exists(pk)",
                }
            },
            {
                "ConditionCheck": {
                    "TableName": "labels",
                    "Key": {"pk": {"S": "l2"}},
                    "ConditionExpression": "attribute_exists(pk)",
                }
            },
        ]
    )
    assert ddb.get_item(TableName="labels", Key={"pk": {"S": "l4"}})["Item"]["created"] == {
        "N": "3"
    }

    sqs = client("sqs", endpoint)
    queue_url = sqs.get_queue_url(QueueName="print-jobs")["QueueUrl"]
    dlq_url = sqs.get_queue_url(QueueName="print-jobs-dlq")["QueueUrl"]

    def counts() -> tuple[str, str]:
        attrs = sqs.get_queue_attributes(
            QueueUrl=queue_url,
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        return (
            attrs["ApproximateNumberOfMessages"],
            attrs["ApproximateNumberOfMessagesNotVisible"],
        )

    redrive = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["RedrivePolicy"])[
        "Attributes"
    ]["RedrivePolicy"]
    assert json.loads(redrive) == {**before["redrive"], "maxReceiveCount": 3}
    # The DLQ link is an object reference inside moto, not just the attribute text.
    assert sqs.list_dead_letter_source_queues(QueueUrl=dlq_url)["queueUrls"] == [queue_url]
    assert counts() == ("1", "1")
    sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=before["receipt_handle"])
    assert counts() == ("1", "0")
    received = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=1)["Messages"]
    assert [m["Body"] for m in received] == ["visible"]

    s3 = client("s3", endpoint)
    obj = s3.get_object(Bucket="etikett-artifacts", Key="labels/l1.pdf")
    assert obj["Body"].read() == before["blob"]
    assert obj["Metadata"] == {"kind": "label"}
    # Versioned keys live in a dict subclass whose items() hides all but the latest version.
    versions = s3.list_object_versions(Bucket="etikett-artifacts", Prefix="templates/")
    bodies = [
        s3.get_object(
            Bucket="etikett-artifacts", Key="templates/t1.json", VersionId=v["VersionId"]
        )["Body"].read()
        for v in sorted(versions["Versions"], key=lambda v: v["IsLatest"])
    ]
    assert bodies == [b"v1", b"v2"]

    kms = client("kms", endpoint)
    plaintext = kms.decrypt(
        CiphertextBlob=before["ciphertext"], EncryptionContext={"tenant": "t1"}
    )["Plaintext"]
    assert plaintext == b"printer secret"
    with pytest.raises(ClientError) as wrong_context:
        kms.decrypt(CiphertextBlob=before["ciphertext"], EncryptionContext={"tenant": "t2"})
    assert wrong_context.value.response["Error"]["Code"] == "InvalidCiphertextException"
    assert kms.describe_key(KeyId="alias/etikett")["KeyMetadata"]["Enabled"]
    assert kms.get_public_key(KeyId=before["sign_key_id"])["PublicKey"] == before["public_key"]
    assert kms.verify(
        KeyId=before["sign_key_id"],
        Message=b"label",
        Signature=before["signature"],
        SigningAlgorithm="ECDSA_SHA_256",
    )["SignatureValid"]

    secrets = client("secretsmanager", endpoint)
    secret = secrets.get_secret_value(SecretId="etikett/printer-token")
    assert secret["SecretString"] == "s3cr3t"

    ssm = client("ssm", endpoint)
    assert ssm.get_parameter(Name="/etikett/feature")["Parameter"]["Value"] == "on"
    tags = ssm.list_tags_for_resource(ResourceType="Parameter", ResourceId="/etikett/feature")
    assert tags["TagList"] == [{"Key": "k", "Value": "v"}]
    ssm.put_parameter(Name="/etikett/other", Value="x", Type="String")  # defaults still work


def test_state_survives_restarts_in_fresh_processes(tmp_path: Path) -> None:
    state_file = tmp_path / "state" / "aws.bin"
    with server_process(state_file) as endpoint:
        before = populate(endpoint)
    # The timer never fired: only the final snapshot of stop() can have written the file.
    assert state_file.exists()

    # Restored objects must snapshot again; this time the timer's snapshot is all there is.
    restarted = ServerProcess(state_file, snapshot_interval=0.1)
    marker = uuid.uuid4().hex
    try:
        endpoint = restarted.endpoint_url()
        check_restored(endpoint, before)  # writes, too
        # Written last: a snapshot that holds it holds every write before it.
        client("ssm", endpoint).put_parameter(Name="/etikett/marker", Value=marker, Type="String")
        wait_for_snapshot_holding(state_file, marker)
    finally:
        restarted.kill()  # no stop(), so no final snapshot

    with server_process(state_file) as endpoint:
        ssm = client("ssm", endpoint)
        assert ssm.get_parameter(Name="/etikett/marker")["Parameter"]["Value"] == marker
        item = client("dynamodb", endpoint).get_item(TableName="labels", Key={"pk": {"S": "l4"}})
        assert item["Item"]["printer"] == {"S": "p1"}
        sqs = client("sqs", endpoint)
        attrs = sqs.get_queue_attributes(
            QueueUrl=sqs.get_queue_url(QueueName="print-jobs")["QueueUrl"],
            AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
        )["Attributes"]
        # One message deleted, the other received (in flight) by the killed process.
        assert attrs == {
            "ApproximateNumberOfMessages": "0",
            "ApproximateNumberOfMessagesNotVisible": "1",
        }


def wait_for_snapshot_holding(state_file: Path, text: str) -> None:
    """Until the state file on disk holds `text` (pickled strings are there as UTF-8): the
    timer's snapshot after a write, however long a loaded machine takes to write it."""
    deadline = time.monotonic() + 60
    while not (state_file.exists() and text.encode() in state_file.read_bytes()):
        assert time.monotonic() < deadline, f"no snapshot holding {text!r} within 60 s"
        time.sleep(0.05)


def wait_for_writes(completed: list[str], *, at_least: int, errors: list[BaseException]) -> None:
    deadline = time.monotonic() + 60
    while len(completed) < at_least and not errors:
        assert time.monotonic() < deadline, f"writers made {len(completed)} writes in 60 s"
        time.sleep(0.05)


def test_snapshot_during_concurrent_writes_is_consistent(tmp_path: Path) -> None:
    """Every transaction writes an item and bumps a counter: a snapshot must have both or
    neither, and must contain every write that completed before it was taken."""
    state_file = tmp_path / "aws.bin"
    stop_writing = threading.Event()
    completed: list[str] = []
    errors: list[BaseException] = []

    with LocalAws(state_file, snapshot_interval=3600) as aws:
        ddb = client("dynamodb", aws.endpoint_url)
        ddb.create_table(
            TableName="counted",
            BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        )

        # Created here: creating boto3 clients from several threads at once is not thread-safe.
        own_clients = [client("dynamodb", aws.endpoint_url) for _ in range(4)]

        def write(worker: int) -> None:
            own = own_clients[worker]
            try:
                for n in range(100_000):
                    if stop_writing.is_set():
                        return
                    pk = f"w{worker}-{n}"
                    own.transact_write_items(
                        TransactItems=[
                            {"Put": {"TableName": "counted", "Item": {"pk": {"S": pk}}}},
                            {
                                "Update": {
                                    "TableName": "counted",
                                    "Key": {"pk": {"S": "counter"}},
                                    "UpdateExpression": "ADD n :one",
                                    "ExpressionAttributeValues": {":one": {"N": "1"}},
                                }
                            },
                        ]
                    )
                    completed.append(pk)
            except BaseException as exc:
                errors.append(exc)

        writers = [threading.Thread(target=write, args=(i,)) for i in range(4)]
        for writer in writers:
            writer.start()
        copies: list[tuple[Path, set[str]]] = []
        try:
            for i in range(2):
                # Waits for progress rather than a fixed time: a loaded machine may take seconds
                # over the writers' first calls.
                wait_for_writes(completed, at_least=len(completed) + 20, errors=errors)
                done_before = set(completed)
                aws.snapshot()
                copy = tmp_path / f"copy-{i}.bin"
                shutil.copyfile(state_file, copy)
                copies.append((copy, done_before))
            # More writes after the last snapshot, which it must not contain: at most one write
            # per writer can have been in it without being in `completed` yet.
            wait_for_writes(completed, at_least=len(completed) + 20, errors=errors)
        finally:
            stop_writing.set()
            for writer in writers:
                writer.join()
    assert not errors
    assert all(done_before for _, done_before in copies), "writers made no progress"

    # Loaded in this process: start() replaces moto's live state with the file's, which the
    # last assertion tells apart from the state the writers left behind.
    for copy, done_before in copies:
        with LocalAws(copy) as restored:
            ddb = client("dynamodb", restored.endpoint_url)
            keys = {
                item["pk"]["S"]
                for page in ddb.get_paginator("scan").paginate(TableName="counted")
                for item in page["Items"]
            }
            counter = ddb.get_item(TableName="counted", Key={"pk": {"S": "counter"}})["Item"]
        keys.discard("counter")
        assert int(counter["n"]["N"]) == len(keys)
        assert done_before <= keys
        assert len(keys) < len(completed)


# --- SQS long polls ---------------------------------------------------------------------------


# Shorter than the 20 s long polls of these tests by far, long enough for a loaded machine.
UNCAPPED_BY_FAR = 10.0


def test_long_poll_is_capped() -> None:
    with LocalAws(None, max_wait_seconds=1) as aws:
        sqs = client("sqs", aws.endpoint_url)
        queue_url = sqs.create_queue(QueueName="idle")["QueueUrl"]

        # Bounds far from the 20 s asked for, not close to the 1 s cap: a loaded machine adds
        # seconds to any request.
        started = time.monotonic()
        assert "Messages" not in sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=20)
        assert 0.9 <= time.monotonic() - started < UNCAPPED_BY_FAR

        # The queue's default wait applies when the request names none: capped as well.
        sqs.set_queue_attributes(
            QueueUrl=queue_url, Attributes={"ReceiveMessageWaitTimeSeconds": "20"}
        )
        started = time.monotonic()
        assert "Messages" not in sqs.receive_message(QueueUrl=queue_url)
        assert time.monotonic() - started < UNCAPPED_BY_FAR


def test_long_poll_blocks_neither_snapshots_nor_senders(tmp_path: Path) -> None:
    with LocalAws(tmp_path / "aws.bin", max_wait_seconds=20) as aws:
        sqs = client("sqs", aws.endpoint_url)
        sender = client("sqs", aws.endpoint_url)
        queue_url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
        result: dict[str, Any] = {}

        def poll() -> None:
            result.update(sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=20))
            result["elapsed"] = time.monotonic() - poll_started

        poll_started = time.monotonic()
        poller = threading.Thread(target=poll)
        poller.start()
        time.sleep(0.3)
        # A poll holding the lock while it waits would delay this by the rest of its 20 s.
        snapshot_started = time.monotonic()
        aws.snapshot()
        assert time.monotonic() - snapshot_started < UNCAPPED_BY_FAR
        sender.send_message(QueueUrl=queue_url, MessageBody="wake up")
        poller.join()
        assert [m["Body"] for m in result["Messages"]] == ["wake up"]
        assert result["elapsed"] < UNCAPPED_BY_FAR  # woken by the message, not at the cap


def test_long_poll_sleeps_until_a_message_becomes_receivable() -> None:
    """An idle long poll asks moto again only when a message's delay or visibility timeout
    ends (or a request wakes it), not every fraction of a second: with hundreds of Runners
    waiting, re-checks would be thousands of receives a second."""
    with LocalAws(None, max_wait_seconds=20) as aws:
        sqs = client("sqs", aws.endpoint_url)
        queue_url = sqs.create_queue(QueueName="sleepy")["QueueUrl"]
        app = aws._app
        assert app is not None
        asked: list[str] = []
        call = app._call

        def counting(environ: Any, **kwargs: Any) -> Any:
            asked.append(environ.get("HTTP_X_AMZ_TARGET", ""))
            return call(environ, **kwargs)

        app._call = counting  # type: ignore[method-assign]

        # Idle for 2 s: one receive when the poll starts and one at its end, none while it
        # waits (re-checking every 0.25 s made it nine).
        started = time.monotonic()
        assert "Messages" not in sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=2)
        assert time.monotonic() - started >= 1.9
        assert asked.count("AmazonSQS.ReceiveMessage") <= 2

        # A delayed message is received when its delay ends, with no request to wake the poll.
        sqs.send_message(QueueUrl=queue_url, MessageBody="later", DelaySeconds=1)
        got = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=20, VisibilityTimeout=1)
        assert [m["Body"] for m in got["Messages"]] == ["later"]
        # Received and not deleted: it comes back when its visibility timeout ends.
        asked.clear()
        started = time.monotonic()
        again = sqs.receive_message(QueueUrl=queue_url, WaitTimeSeconds=20)
        assert [m["Body"] for m in again["Messages"]] == ["later"]
        assert time.monotonic() - started < UNCAPPED_BY_FAR
        assert asked.count("AmazonSQS.ReceiveMessage") <= 3


def test_long_poll_cap_applies_to_the_query_protocol() -> None:
    with LocalAws(None, max_wait_seconds=1) as aws:
        queue_url = client("sqs", aws.endpoint_url).create_queue(QueueName="legacy")["QueueUrl"]
        form = urlencode(
            {
                "Action": "ReceiveMessage",
                "QueueUrl": queue_url,
                "WaitTimeSeconds": "20",
                "Version": "2012-11-05",
            }
        )
        request = urllib.request.Request(
            aws.endpoint_url + "/",
            data=form.encode(),
            headers={
                "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
                # moto routes by the credential scope and does not check the signature.
                "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20250101/"
                f"{REGION}/sqs/aws4_request, SignedHeaders=host, Signature=00",
            },
        )
        started = time.monotonic()
        with urllib.request.urlopen(request, timeout=30) as response:
            body = response.read()
        assert time.monotonic() - started < UNCAPPED_BY_FAR
        assert b"<ReceiveMessageResponse" in body
        assert b"<Message>" not in body


# --- the state file ---------------------------------------------------------------------------


def make_table(endpoint: str, name: str) -> None:
    client("dynamodb", endpoint).create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )


def snapshot_header(moto_version: str) -> bytes:
    header = {"format": 1, "moto": moto_version, "created": "2025-01-01T00:00:00+00:00"}
    return b"ETIKETT-LOCAL-AWS-SNAPSHOT\n" + json.dumps(header).encode() + b"\n"


@pytest.mark.parametrize(
    "content",
    [
        pytest.param(b"not a snapshot at all", id="foreign-file"),
        pytest.param(snapshot_header(moto.__version__) + b"\x80\x05garbage", id="bad-pickle"),
        # A payload that would load fine: the version alone is reason enough.
        pytest.param(snapshot_header("0.0.1") + pickle.dumps({}), id="other-moto-version"),
    ],
)
def test_unreadable_state_file_is_moved_aside(
    tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    # Leftovers in this process's moto must not survive a start either.
    with LocalAws(None) as aws:
        make_table(aws.endpoint_url, "leftover")
    state_file = tmp_path / "aws.bin"
    state_file.write_bytes(content)

    with caplog.at_level(logging.WARNING, logger="etikett.local.aws"), LocalAws(state_file) as aws:
        assert client("dynamodb", aws.endpoint_url).list_tables()["TableNames"] == []
        make_table(aws.endpoint_url, "fresh")

    [aside] = tmp_path.glob("aws.bin.unreadable-*")
    assert aside.read_bytes() == content
    assert any(str(aside) in record.getMessage() for record in caplog.records)
    with LocalAws(state_file) as aws:
        assert client("dynamodb", aws.endpoint_url).list_tables()["TableNames"] == ["fresh"]


def test_state_file_is_private_and_written_atomically(tmp_path: Path) -> None:
    state_file = tmp_path / "aws.bin"
    old_umask = os.umask(0o022)
    try:
        with LocalAws(state_file) as aws:
            make_table(aws.endpoint_url, "t")
            aws.snapshot()
            assert state_file.stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old_umask)
    assert state_file.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["aws.bin"]  # no temp files left behind
    assert state_file.read_bytes().startswith(b"ETIKETT-LOCAL-AWS-SNAPSHOT\n")


def request_handler_threads() -> set[threading.Thread]:
    """The threads that werkzeug's threaded server (socketserver's ThreadingMixIn) started for
    accepted connections, still running. (The thread objects, not their idents: a thread that
    ends hands its ident on to the next one, which would then not count as new.)"""
    return {
        thread
        for thread in threading.enumerate()
        if thread.name.endswith("(process_request_thread)")
    }


def test_request_in_flight_at_stop_is_refused(tmp_path: Path) -> None:
    """A request the server accepted before stop() must not land after the final snapshot."""
    aws = LocalAws(tmp_path / "aws.bin")
    aws.start()
    make_table(aws.endpoint_url, "early")
    address = urlsplit(aws.endpoint_url)
    body = json.dumps({"TableName": "early"}).encode()
    request = (
        "POST / HTTP/1.1\r\n"
        f"Host: {address.netloc}\r\n"
        "X-Amz-Target: DynamoDB_20120810.DeleteTable\r\n"
        "Content-Type: application/x-amz-json-1.0\r\n"
        f"Authorization: AWS4-HMAC-SHA256 Credential=testing/20250101/{REGION}/dynamodb/"
        "aws4_request, SignedHeaders=host, Signature=00\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    handlers_before = request_handler_threads()
    with socket.create_connection((address.hostname, address.port), timeout=10) as sock:
        sock.sendall(request[:20])
        # Accepted: a handler thread of its own now waits for the rest. (Connected alone is not
        # enough: a connection still in the listen backlog at stop() would just be reset.)
        deadline = time.monotonic() + 60
        while not request_handler_threads() - handlers_before:
            assert time.monotonic() < deadline, "the server never accepted the connection"
            time.sleep(0.01)
        aws.stop()
        sock.sendall(request[20:])
        response = sock.recv(65536)
    assert response.startswith(b"HTTP/1.1 503")


def test_without_state_file_nothing_is_written(tmp_path: Path) -> None:
    with LocalAws(None) as aws:
        assert aws.endpoint_url.startswith("http://127.0.0.1:")
        make_table(aws.endpoint_url, "t")
        aws.snapshot()
    assert list(tmp_path.iterdir()) == []


def test_a_bucket_of_an_earlier_server_in_the_process_can_be_made_again(tmp_path: Path) -> None:
    """moto's process-wide bucket registry follows the state in place: a second server (a second
    test stack in one pytest process) creates the same bucket as the first did."""

    def s3(aws: LocalAws) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=aws.endpoint_url,
            region_name="eu-central-1",
            aws_access_key_id="local",
            aws_secret_access_key="local",
        )

    location = {"LocationConstraint": "eu-central-1"}
    with LocalAws(tmp_path / "aws.bin") as first:
        s3(first).create_bucket(Bucket="assets", CreateBucketConfiguration=location)
        s3(first).put_object(Bucket="assets", Key="k", Body=b"kept")
    with LocalAws(None) as second:
        s3(second).create_bucket(Bucket="assets", CreateBucketConfiguration=location)
        assert s3(second).list_objects_v2(Bucket="assets").get("KeyCount") == 0
    with LocalAws(tmp_path / "aws.bin") as restored:  # and restored buckets are registered
        assert s3(restored).get_object(Bucket="assets", Key="k")["Body"].read() == b"kept"
        with pytest.raises(ClientError, match=r"BucketAlreadyOwnedByYou|BucketAlreadyExists"):
            s3(restored).create_bucket(Bucket="assets", CreateBucketConfiguration=location)


def serve(state_file: str, snapshot_interval: str) -> None:
    """Subprocess entry point: serve until stdin closes, then stop gracefully."""
    logging.basicConfig(level=logging.WARNING)
    aws = LocalAws(Path(state_file), snapshot_interval=float(snapshot_interval))
    aws.start()
    print(aws.endpoint_url, flush=True)
    sys.stdin.read()
    aws.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["serve"]:
        serve(*sys.argv[2:])
    else:
        sys.exit(f"usage: {sys.argv[0]} serve STATE_FILE SNAPSHOT_INTERVAL")


def test_calls_share_one_connection_and_a_body_ends_where_its_length_says() -> None:
    """botocore's connections stay open between calls (no TCP connection and server thread per
    call), answers carry their length, and a client that asks for it gets the connection closed."""
    import http.client

    with LocalAws(None) as aws:
        make_table(aws.endpoint_url, "t")
        dynamodb = client("dynamodb", aws.endpoint_url)
        dynamodb.put_item(TableName="t", Item={"pk": {"S": "a"}, "v": {"S": "x" * 5000}})
        before = threading.active_count()
        for _ in range(20):
            assert dynamodb.get_item(TableName="t", Key={"pk": {"S": "a"}})["Item"]["v"]["S"]
        assert threading.active_count() <= before + 1  # one thread per connection, not per call

        host, port = urlsplit(aws.endpoint_url).netloc.split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=10)
        body = json.dumps({"TableName": "t", "Key": {"pk": {"S": "a"}}})
        headers = {
            "Content-Type": "application/x-amz-json-1.0",
            "X-Amz-Target": "DynamoDB_20120810.GetItem",
            "Authorization": "AWS4-HMAC-SHA256 Credential=testing/20260101/eu-central-1/"
            "dynamodb/aws4_request, SignedHeaders=host, Signature=0",
        }
        sockets = []
        for _ in range(3):
            connection.request("POST", "/", body, headers)
            answer = connection.getresponse()
            data = answer.read()
            assert answer.status == 200 and answer.getheader("Connection") is None
            assert int(answer.getheader("Content-Length")) == len(data)
            assert json.loads(data)["Item"]["v"]["S"] == "x" * 5000
            sockets.append(connection.sock)
        assert sockets[0] is not None and sockets.count(sockets[0]) == 3  # the same connection
        connection.request("POST", "/", body, {**headers, "Connection": "close"})
        answer = connection.getresponse()
        answer.read()
        assert answer.getheader("Connection") == "close"
        connection.close()


def _snapshots_taken(monkeypatch: pytest.MonkeyPatch, holding: float = 0.0) -> list[float]:
    """When each snapshot's pickling ended (monotonic), each taking `holding` seconds longer."""
    from etikett.local.aws import server as local_aws_server

    taken: list[float] = []
    real_dump = local_aws_server.dump_backends

    def dump() -> bytes:
        time.sleep(holding)
        taken.append(time.monotonic())
        return real_dump()

    monkeypatch.setattr(local_aws_server, "dump_backends", dump)
    return taken


def _table(aws: LocalAws, name: str) -> Any:
    ddb = client("dynamodb", aws.endpoint_url)
    ddb.create_table(
        TableName=name,
        BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
    )
    return ddb


def test_a_long_snapshot_spaces_out_the_next_while_writes_go_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A snapshot holds every request while it pickles: after one that held 0.3 s, the next
    periodic one waits nineteen times as long (not the 0.05 s interval), and requests wait for
    snapshots at most a twentieth of the time. The final one still has every write."""
    taken = _snapshots_taken(monkeypatch, holding=0.3)
    state_file = tmp_path / "aws.bin"
    with LocalAws(state_file, snapshot_interval=0.05, busy_snapshot_seconds=0.05) as aws:
        ddb = _table(aws, "paced")
        writes = 0
        until = time.monotonic() + 2.0
        while time.monotonic() < until:  # the state is dirty all along
            ddb.put_item(TableName="paced", Item={"pk": {"S": f"item-{writes}"}})
            writes += 1
        periodic = list(taken)
    assert len(periodic) == 1, periodic  # every 0.35 s (five or more) without the pacing
    with LocalAws(state_file, snapshot_interval=3600) as again:
        count = client("dynamodb", again.endpoint_url).scan(TableName="paced", Select="COUNT")
        assert count["Count"] == writes


def test_snapshots_wait_for_a_pause_in_the_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While writes go on without a pause, no snapshot holds them before the busy bound (1 s
    here); once they pause for the interval, one comes, with every write."""
    taken = _snapshots_taken(monkeypatch)
    state_file = tmp_path / "aws.bin"
    with LocalAws(state_file, snapshot_interval=0.2, busy_snapshot_seconds=1.0) as aws:
        ddb = _table(aws, "bulk")
        time.sleep(0.6)  # the table's snapshot
        taken.clear()
        started = time.monotonic()
        writes = 0
        done = [started]  # when each write was answered
        while time.monotonic() - started < 1.6:  # meant never to leave 0.2 s without a write
            ddb.put_item(TableName="bulk", Item={"pk": {"S": f"item-{writes}"}})
            writes += 1
            done.append(time.monotonic())
        during = [t - started for t in taken]
        # A loaded machine can stall this loop past the interval: that is a pause in the
        # writes, and a snapshot after it is due (the rule below), not a failure.
        # When each pause began (a snapshot is due 0.2 s later).
        pauses = [a - started for a, b in itertools.pairwise(done) if b - a >= 0.2]
        paused = time.monotonic()
        deadline = paused + 5.0
        while len(taken) == len(during) and time.monotonic() < deadline:
            time.sleep(0.02)
        after = [t - paused for t in taken[len(during) :]]
    # One, at the busy bound, not one every 0.2 s (eight without the rule).
    if not pauses:
        assert len(during) == 1 and 0.9 <= during[0] <= 1.5, during
    else:  # each one at the busy bound or after a pause of the writes
        assert 1 <= len(during) <= 1 + len(pauses), (during, pauses)
        assert all(t >= 0.9 or any(p <= t for p in pauses) for t in during), (during, pauses)
    assert after and 0.15 <= after[0] <= 1.0, after
    with LocalAws(state_file, snapshot_interval=3600) as again:
        count = client("dynamodb", again.endpoint_url).scan(TableName="bulk", Select="COUNT")
        assert count["Count"] == writes
