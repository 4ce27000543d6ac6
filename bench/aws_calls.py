"""AWS calls per print: every botocore call `etikett dev` makes from `POST /print` to the
Runner's final report (and the events that follow), counted and listed.

    .venv/bin/python bench/aws_calls.py [--prints 30] [--idle 6]

`etikett dev` runs with `bench/aws_call_log` on PYTHONPATH: its `sitecustomize` appends each
botocore call, with the function invocation it was made in, to a log. The run first counts an
idle window (heartbeats, the Runner's empty long polls, the stream pollers) and subtracts that
rate, then sends `--prints` single-label prints, each after the previous job is `confirmed`, and
waits until the last one's events are out. The answer is the calls of the print window less the
idle rate over its length, per print; the table lists them by function, request and operation.
The goal counts the calls as on AWS: local mode's stream reads (LOCAL_ONLY) are listed apart, and
so is what is left of the queue pollers' long polls after the subtraction (BACKGROUND: noise).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path[:0] = [str(BENCH), str(BENCH.parent / "tests")]

GOAL = 8.0
# Calls only local mode makes per print: its stream poller reads a shard when it has new
# records. On AWS, Lambda's event source mapping polls each shard four times a second whether
# or not anything printed (and those reads are free for Lambda triggers): no call per print.
LOCAL_ONLY = {"dynamodbstreams.GetRecords"}
# Calls no print makes: the event source pollers' long polls of the SQS queues (made outside any
# function; on AWS by Lambda's event source mappings) go on at one rate with or without prints.
# What the idle rate's subtraction leaves of them (±0.1 a print) is noise: listed, not counted.
BACKGROUND = {("-", "sqs.ReceiveMessage")}

Key = tuple[str, str, str]  # function, request, operation
# The bench's own requests (waiting for each job to be confirmed) are not the print's.
THE_BENCHS_OWN = {"GET_/api/v1/jobs/{jobId}"}


def read(log: Path, since: int) -> tuple[list[tuple[float, Key]], int]:
    data = log.read_bytes()
    lines = data[since:].decode().splitlines()
    calls = []
    for line in lines:
        moment, operation, function, request = line.split("\t")
        calls.append((float(moment), (function, request, operation)))
    return calls, len(data)


def measure(prints: int, idle: float) -> dict[str, object]:
    import print_bench

    folder = Path(tempfile.mkdtemp(prefix="etikett-aws-calls-"))
    log = folder / "calls.log"
    log.touch()
    env = {
        "ETIKETT_BENCH_CALL_LOG": str(log),
        "PYTHONPATH": os.pathsep.join(
            [str(BENCH / "aws_call_log"), *filter(None, [os.environ.get("PYTHONPATH")])]
        ),
    }
    with print_bench.PrintRig(env=env) as rig:
        rig.singles(3, wait_for_the_end=True)  # warm: every function has answered once
        time.sleep(2.5)  # the warm-up's events are out
        _, offset = read(log, 0)
        started = time.monotonic()
        time.sleep(idle)
        quiet, offset = read(log, offset)
        idle_seconds = time.monotonic() - started
        started = time.monotonic()
        rig.singles(prints, wait_for_the_end=True)
        time.sleep(2.5)  # the last print's events (stream → publisher) are out
        busy, _ = read(log, offset)
        busy_seconds = time.monotonic() - started
    idle_rate = Counter(key for _, key in quiet if key[1] not in THE_BENCHS_OWN)
    counted = Counter(key for _, key in busy if key[1] not in THE_BENCHS_OWN)
    per_print: dict[Key, float] = {}
    for key in set(counted) | set(idle_rate):
        share = (counted[key] - idle_rate[key] / idle_seconds * busy_seconds) / (prints + 3)
        if abs(share) >= 0.05:
            per_print[key] = share
    local_only = sum(share for key, share in per_print.items() if key[2] in LOCAL_ONLY)
    background = sum(share for key, share in per_print.items() if key[::2] in BACKGROUND)
    return {
        "per_print": per_print,
        "idle_per_second": sum(idle_rate.values()) / idle_seconds,
        "total": sum(per_print.values()) - local_only - background,
        "local_only": local_only,
    }


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--prints", type=int, default=30)
    parser.add_argument("--idle", type=float, default=6.0)
    arguments = parser.parse_args()
    result = measure(arguments.prints, arguments.idle)
    per_print = result["per_print"]
    assert isinstance(per_print, dict)
    print(f"AWS calls per print ({arguments.prints} prints, each after the previous confirmed)")
    print(f"{'function':<26} {'request':<48} {'operation':<34} per print")
    for (function, request, operation), share in sorted(per_print.items()):
        where = "  (local mode only)" if operation in LOCAL_ONLY else ""
        if (function, operation) in BACKGROUND:
            where = "  (background, not counted)"
        print(f"{function:<26} {request:<48} {operation:<34} {share:9.2f}{where}")
    total = float(result["total"])  # type: ignore[arg-type]
    local_only = float(result["local_only"])  # type: ignore[arg-type]
    print(
        f"total {total:.1f} per print as on AWS, {total + local_only:.1f} in local mode "
        f"(goal <= {GOAL:g}: {'PASS' if total <= GOAL else 'FAIL'}); "
        f"idle rate subtracted: {result['idle_per_second']:.1f} calls/s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
