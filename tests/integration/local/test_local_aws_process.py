"""LocalAwsProcess: local AWS in a process of its own, as `etikett dev` runs it. Its state survives
a restart, it ignores Ctrl-C (the parent stops it, after its pollers), it stops with its parent,
and it tells the stream poller a table's stream end as the in-process `moto_shard_end` would."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.config import Config

from etikett.local.aws.process import LocalAwsProcess

REGION = "eu-central-1"
DUMMY_ENV = {
    "AWS_ACCESS_KEY_ID": "testing",
    "AWS_SECRET_ACCESS_KEY": "testing",
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
}


@pytest.fixture(autouse=True)
def dummy_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in DUMMY_ENV.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def _dynamodb(endpoint_url: str) -> Any:
    config = Config(retries={"total_max_attempts": 1}, read_timeout=30)
    return boto3.client("dynamodb", endpoint_url=endpoint_url, region_name=REGION, config=config)


def _table(endpoint_url: str, name: str = "things") -> Any:
    dynamodb = _dynamodb(endpoint_url)
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
    )
    return dynamodb


def test_state_survives_a_restart_and_the_stream_end_is_answered(tmp_path: Path) -> None:
    state = tmp_path / "aws-state.pickle"
    with LocalAwsProcess(state, snapshot_interval=3600) as aws:
        assert aws.pid is not None and aws.pid != os.getpid()
        shard_end = aws.shard_end(REGION)
        assert shard_end("things") is None  # no such table (stream) yet
        dynamodb = _table(aws.endpoint_url)
        assert shard_end("things") == 0  # a stream without records
        for index in range(3):
            dynamodb.put_item(TableName="things", Item={"id": {"S": f"t{index}"}})
        first = shard_end("things")
        assert first is not None and first > 0
        dynamodb.put_item(TableName="things", Item={"id": {"S": "t3"}})
        assert shard_end("things") == first + 1
    assert state.is_file()  # the final snapshot, written on stop
    with LocalAwsProcess(state) as aws:
        items = _dynamodb(aws.endpoint_url).scan(TableName="things")["Items"]
        assert sorted(item["id"]["S"] for item in items) == ["t0", "t1", "t2", "t3"]
        assert aws.shard_end(REGION)("things") == first + 1


def _ignored_signals(pid: int) -> set[int]:
    status = Path(f"/proc/{pid}/status").read_text()
    mask = int(
        next(line for line in status.splitlines() if line.startswith("SigIgn:")).split()[1], 16
    )
    return {number for number in range(1, 65) if mask >> (number - 1) & 1}


def test_ctrl_c_and_sigterm_leave_it_to_the_parent(tmp_path: Path) -> None:
    """Both reach the whole process group (a terminal's Ctrl-C, systemd stopping the service);
    the parent stops local AWS after its pollers."""
    with LocalAwsProcess(tmp_path / "aws-state.pickle") as aws:
        assert aws.pid is not None
        assert {signal.SIGINT, signal.SIGTERM} <= _ignored_signals(aws.pid)
        os.kill(aws.pid, signal.SIGINT)
        os.kill(aws.pid, signal.SIGTERM)
        _table(aws.endpoint_url)  # still serving
        assert _dynamodb(aws.endpoint_url).list_tables()["TableNames"] == ["things"]


def test_what_it_prints_after_starting_never_fills_a_pipe(tmp_path: Path) -> None:
    """The parent reads the child's standard output up to the first line only."""
    with LocalAwsProcess(tmp_path / "aws-state.pickle") as aws:
        assert aws.pid is not None
        out, err = (os.readlink(f"/proc/{aws.pid}/fd/{fd}") for fd in (1, 2))
        assert out == err


def test_a_second_one_on_the_same_state_waits_for_the_first_ones_final_snapshot(
    tmp_path: Path,
) -> None:
    state = tmp_path / "aws-state.pickle"
    first = LocalAwsProcess(state, snapshot_interval=3600)  # no snapshot before its stop
    first.start()
    try:
        _table(first.endpoint_url)
        second = LocalAwsProcess(state)
        started = threading.Thread(target=second.start)
        started.start()
        lock = f"{state}.lock"
        # The second child has opened the lock file (and waits for it): only now stop the first.
        deadline = time.monotonic() + 60
        while not _holds_open(second, lock):
            assert time.monotonic() < deadline, "the second child never reached the state file"
            time.sleep(0.05)
        assert started.is_alive()  # not serving yet
    finally:
        first.stop()
    started.join(60)
    try:
        assert _dynamodb(second.endpoint_url).list_tables()["TableNames"] == ["things"]
    finally:
        second.stop()


def _holds_open(aws: LocalAwsProcess, path: str) -> bool:
    pid = aws.pid
    if pid is None:
        return False
    try:
        return any(
            os.readlink(fd) == path for fd in Path(f"/proc/{pid}/fd").iterdir() if fd.is_symlink()
        )
    except FileNotFoundError:
        return False


_PARENT = """
import sys, time
from pathlib import Path
from etikett.local.aws.process import LocalAwsProcess
aws = LocalAwsProcess(Path(sys.argv[1]), snapshot_interval=3600)
aws.start()
print(aws.pid, aws.endpoint_url, flush=True)
time.sleep(600)
"""


def test_it_stops_with_a_snapshot_when_its_parent_dies(tmp_path: Path) -> None:
    state = tmp_path / "aws-state.pickle"
    parent = subprocess.Popen(
        [sys.executable, "-c", _PARENT, str(state)], stdout=subprocess.PIPE, text=True
    )
    assert parent.stdout is not None
    pid, endpoint_url = parent.stdout.readline().split()
    _table(endpoint_url)
    parent.kill()  # SIGKILL: the parent stops nothing itself
    parent.wait(10)
    parent.stdout.close()
    deadline = time.monotonic() + 30
    while _alive(int(pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(int(pid))
    with LocalAwsProcess(state) as aws:
        assert _dynamodb(aws.endpoint_url).list_tables()["TableNames"] == ["things"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie of the killed parent's child is gone for our purposes: reaped by init.
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_its_collector_leaves_the_loaded_state_alone_and_still_collects_cycles() -> None:
    """tune_collector (run by the process after loading its state): what was loaded is frozen,
    young collections are rarer, and garbage cycles made later are still collected without
    anyone asking."""
    probe = """
import gc, weakref
from etikett.local.aws.process import tune_collector
tune_collector()
print(gc.get_freeze_count() > 0, gc.get_threshold()[0] > 700)
class Node:
    pass
cycle = Node()
cycle.self = cycle
alive = weakref.ref(cycle)
del cycle
kept = [[n] for n in range(200_000)]  # allocations, as requests make them
print(alive() is None)
"""
    answer = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    assert answer.stdout.split() == ["True", "True", "True"], answer.stderr
