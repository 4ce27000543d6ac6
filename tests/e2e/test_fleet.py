"""A short fleet, `make fleet`'s and `make bench`'s run in small (bench/fleet.py): simulated
Runners speaking the real protocol against `etikett dev` fall asleep while idle, cost no queue
receives then, and every print sent across the fleet reaches its printer, woken or polled."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import fleet  # noqa: E402 - after the path

RUNNERS = 3


def test_a_short_fleet_sleeps_while_idle_and_prints_everything_sent_to_it() -> None:
    args = fleet.options().parse_args(
        [
            f"--runners={RUNNERS}",
            "--printers=2",
            "--idle=6",
            "--busy=4",
            "--rate=2",
            "--reference=2",
            "--baseline=1",
            "--reference-busy=1",
            "--ramp=1",
            "--wait=wake",
            "--awake=2",  # shorter than the service's margin: every print wakes its Runner
        ]
    )
    result = asyncio.run(fleet.fleet(args))
    assert result["errors"] == []
    assert result["asleep_at_end_of_idle"] == RUNNERS
    assert result["sqs_per_runner_minute"] == 0  # asleep: no receives in the idle window
    assert result["channel_per_runner_minute"] == 0
    assert result["aws_per_runner_minute"] <= fleet.GOAL_REQUESTS_PER_MINUTE
    assert result["prints"] >= 8 and result["prints_done"] == result["prints"]
    assert result["labels_at_printers"] >= result["prints"] + args.reference  # and one Runner's
    assert result["first_prints"] >= 1 and result["wakes"] >= result["first_prints"]
    assert result["mqtt_connects"] == RUNNERS
