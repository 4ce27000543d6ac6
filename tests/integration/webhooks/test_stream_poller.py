"""Local mode polls a template's DynamoDB stream event sources with Lambda's semantics, and
checkpoints them so that a restart neither loses nor replays records."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.dynamodbstreams.models import dynamodbstreams_backends

from etikett import settings
from etikett.local import provision
from etikett.local.aws import LocalAws
from etikett.local.functions import FunctionRegistry
from etikett.local.stream_checkpoints import CHECKPOINT_FILE, Checkpoints
from etikett.local.streams import StreamPoller, moto_shard_end
from etikett.local.template import LOCAL_ACCOUNT, load

FIXTURE = Path(__file__).resolve().parent / "stream_app" / "template.yaml"
REGION = "eu-central-1"
STATE = "aws-state.pickle"


def wait_until(check: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.05)


class LocalMode:
    """What `etikett dev` runs for these sources: local AWS with its state file, the pollers."""

    def __init__(self, home: Path, monkeypatch: pytest.MonkeyPatch, margin: float = 10) -> None:
        self.home = home
        self.monkeypatch = monkeypatch
        self.margin = margin
        self.template = load(FIXTURE)
        self.aws: LocalAws | None = None
        self.poller: StreamPoller | None = None

    def start(self, poll: bool = True) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        checkpoints = Checkpoints(
            self.home / CHECKPOINT_FILE, snapshot=self.home / STATE, margin_seconds=self.margin
        )
        self.aws = LocalAws(self.home / STATE)
        self.aws.start()
        self.monkeypatch.setenv("AWS_ENDPOINT_URL", self.aws.endpoint_url)
        self.resolver = provision.provision(self.template, self.aws.endpoint_url, REGION)
        for name, value in provision.function_environment(self.template, self.resolver).items():
            self.monkeypatch.setenv(name, value)
        settings.reload()
        session = boto3.session.Session(region_name=REGION)
        self.dynamodb = session.client("dynamodb", endpoint_url=self.aws.endpoint_url)
        if poll:
            self.poller = StreamPoller(
                self.template.stream_sources,
                self.resolver,
                FunctionRegistry(self.template.functions, REGION),
                self.aws.endpoint_url,
                REGION,
                checkpoints,
                shard_end=moto_shard_end(REGION),
            )
            self.poller.start()

    def stop(self) -> None:
        if self.poller is not None:
            self.poller.stop()
            self.poller = None
        assert self.aws is not None
        self.aws.stop()

    def put(self, item_id: str, **attributes: Any) -> None:
        item = {"id": {"S": item_id}}
        item.update({k: {"N": str(v)} for k, v in attributes.items()})
        self.dynamodb.put_item(TableName=self.resolver.refs["Items"], Item=item)

    def seen(self) -> dict[str, dict[str, Any]]:
        items = self.dynamodb.scan(TableName=self.resolver.refs["Seen"])["Items"]
        return {
            item["id"]["S"]: {key: next(iter(value.values())) for key, value in item.items()}
            for item in items
        }

    def handled(self) -> dict[str, int]:
        return {key: int(value["handled"]) for key, value in self.seen().items()}

    def checkpoint(self) -> str | None:
        document = json.loads((self.home / CHECKPOINT_FILE).read_text())
        (shards,) = document["streams"].values()
        (shard,) = shards.values()
        return shard["position"]


@pytest.fixture
def local(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LocalMode]:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    mode = LocalMode(tmp_path / "home", monkeypatch)
    yield mode
    if mode.aws is not None and mode.aws._server is not None:
        mode.stop()


def _iterators() -> int:
    return len(dynamodbstreams_backends[LOCAL_ACCOUNT][REGION].shard_iterators)


def test_template_sources_are_read() -> None:
    (source,) = load(FIXTURE).stream_sources
    assert (source.function, source.table, source.batch_size) == ("Consumer", "Items", 4)
    assert source.starting_position == "TRIM_HORIZON" and source.report_item_failures
    assert source.maximum_retry_attempts == -1


def test_records_are_handed_over_in_order_once_as_lambda_passes_them(local: LocalMode) -> None:
    local.start()
    ids = [f"a{n}" for n in range(10)]
    for item_id in ids:
        local.put(item_id)
    wait_until(lambda: len(local.seen()) == 10)
    seen = local.seen()
    assert {key: int(value["handled"]) for key, value in seen.items()} == dict.fromkeys(ids, 1)
    assert sorted(ids, key=lambda i: int(seen[i]["seq"])) == ids
    stream_arn = local.dynamodb.describe_table(TableName=local.resolver.refs["Items"])["Table"][
        "LatestStreamArn"
    ]
    assert {
        (v["event_name"], v["source_arn"], v["aws_region"], v["created_type"])
        for v in seen.values()
    } == {("INSERT", stream_arn, REGION, "int")}

    local.put("a3", extra=1)
    wait_until(lambda: local.handled()["a3"] == 2)
    assert local.seen()["a3"]["event_name"] == "MODIFY"

    # Nothing new: no GetRecords at all (in moto each call keeps an iterator for good).
    wait_until(lambda: local.checkpoint() == local.seen()["a3"]["seq"])
    before = _iterators()
    time.sleep(1)
    assert _iterators() == before


def test_a_failed_record_is_retried_from_there_in_order(local: LocalMode) -> None:
    local.start()
    local.put("b0")
    local.put("b1", fail_times=2)
    local.put("b2")
    local.put("b3")
    wait_until(lambda: local.handled().get("b3") == 1)
    assert local.handled() == {"b0": 1, "b1": 3, "b2": 1, "b3": 1}


def test_a_restart_neither_loses_nor_replays(local: LocalMode) -> None:
    local.start()
    local.put("c0")
    local.put("c1")
    wait_until(lambda: local.handled() == {"c0": 1, "c1": 1})
    local.stop()
    assert json.loads((local.home / CHECKPOINT_FILE).read_text())["clean"] is True

    local.start(poll=False)  # a record committed while nothing polls the stream
    local.put("c2")
    local.stop()

    local.start()
    wait_until(lambda: "c2" in local.handled())
    local.put("c3")
    wait_until(lambda: "c3" in local.handled())
    time.sleep(0.5)
    assert local.handled() == {"c0": 1, "c1": 1, "c2": 1, "c3": 1}


def test_after_an_unclean_stop_records_since_the_snapshot_are_handed_again(
    local: LocalMode, tmp_path: Path
) -> None:
    # Snapshots here are those of stops, so no margin is needed to know what they hold.
    local.margin = 0
    local.start()
    local.put("d0")
    wait_until(lambda: "d0" in local.handled())
    local.stop()
    local.start(poll=False)
    local.put("d1")
    local.stop()
    shutil.copy2(local.home / STATE, tmp_path / "older-state")  # d1 committed, not handled
    local.start()
    wait_until(lambda: "d1" in local.handled())
    local.stop()
    # As after a crash: the last snapshot on disk predates d1's hand-over (and its effects).
    shutil.copy2(tmp_path / "older-state", local.home / STATE)

    local.start()
    wait_until(lambda: "d1" in local.handled())
    time.sleep(0.5)
    assert local.handled() == {"d0": 1, "d1": 1}


# --- checkpoints after an unclean stop ---------------------------------------------------------


def _write(path: Path, **document: Any) -> None:
    path.write_text(json.dumps({"format": 1, "advanced_at": 0, "closed_at": None, **document}))


def _journal_file(path: Path, t0: float, clean: bool = False, closed_at: float | None = None):
    _write(
        path,
        clean=clean,
        closed_at=closed_at,
        streams={
            "arn:s": {
                "shard-1": {
                    "position": "13",
                    "base": "10",
                    "journal": [["11", t0], ["12", t0 + 5], ["13", t0 + 20]],
                }
            }
        },
    )


@pytest.mark.parametrize(
    ("snapshot_age", "margin", "clean", "resumes"),
    [
        (17, 10, False, "12"),  # taken at t0+17: what was reached by t0+7 is surely in it
        (17, 0, False, "12"),
        (25, 0, False, "13"),
        (25, 10, False, "12"),
        (3, 0, False, "11"),
        (-1, 0, False, "10"),  # older than the whole journal: the position before it
        (25, 10, True, "13"),  # a clean stop whose final snapshot came after closing
        (19, 10, True, "12"),  # "clean", but the final snapshot is missing
    ],
)
def test_positions_after_a_stop(
    tmp_path: Path, snapshot_age: float, margin: float, clean: bool, resumes: str
) -> None:
    t0 = time.time() - 100
    state = tmp_path / STATE
    state.write_bytes(b"state")
    os.utime(state, (t0 + snapshot_age, t0 + snapshot_age))
    _journal_file(tmp_path / CHECKPOINT_FILE, t0, clean=clean, closed_at=t0 + 21)
    checkpoints = Checkpoints(tmp_path / CHECKPOINT_FILE, snapshot=state, margin_seconds=margin)
    assert checkpoints.position("arn:s", "shard-1") == resumes


def test_without_snapshots_positions_are_exact(tmp_path: Path) -> None:
    _journal_file(tmp_path / CHECKPOINT_FILE, time.time())
    assert Checkpoints(tmp_path / CHECKPOINT_FILE).position("arn:s", "shard-1") == "13"


def test_an_unreadable_checkpoint_file_is_set_aside(tmp_path: Path) -> None:
    (tmp_path / CHECKPOINT_FILE).write_text("{not json")
    checkpoints = Checkpoints(tmp_path / CHECKPOINT_FILE)
    assert not checkpoints.known("arn:s", "shard-1")
    assert [p.name.split(".unreadable-")[0] for p in tmp_path.iterdir()] == [CHECKPOINT_FILE]
