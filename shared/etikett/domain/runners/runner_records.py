"""Runners and Runner groups as other aggregates read them (jobs, printers, discovery, the agent
channel, deployments): loading (runner.not_found, runner_group.not_found), a Runner's status and
the ports its group's printers may use. No request or answer models, so a function that only
looks Runners up does not load the Runner API's. Context parameters: `runner_context`."""

from __future__ import annotations

from datetime import datetime, timedelta

from etikett import clock
from etikett.settings import get_settings
from etikett.store import runners
from etikett.store.runners import GroupRecord, RunnerRecord
from etikett_engine.errors import NotFound, ProblemCode
from etikett_engine.printer_reach import PRINTER_PORTS


def load_runner(runner_id: str) -> RunnerRecord:
    record = runners.get_runner(runner_id)
    if record is None:
        raise NotFound(f"No Runner {runner_id}.", ProblemCode.RUNNER_NOT_FOUND, runner_id=runner_id)
    return record


def load_group(group_id: str) -> GroupRecord:
    record = runners.get_group(group_id)
    if record is None:
        raise NotFound(
            f"No Runner group {group_id}.", ProblemCode.RUNNER_GROUP_NOT_FOUND, group_id=group_id
        )
    return record


def status_of(record: RunnerRecord, now: datetime | None = None) -> str:
    if record.state != "active":
        return "pending"
    seen = record.last_seen_at
    within = timedelta(seconds=get_settings().runner_offline_seconds)  # 3 heartbeats by default
    return "online" if seen and (now or clock.now()) - seen <= within else "offline"


def online_runners(group_id: str) -> list[RunnerRecord]:
    now = clock.now()
    return [r for r in runners.runners_of(group_id) if status_of(r, now) == "online"]


def members(group_id: str) -> list[RunnerRecord]:
    """Every Runner of a group, admitted or not."""
    return runners.runners_of(group_id)


def printer_ports(group_id: str) -> frozenset[int]:
    """Every port the group's printers may use."""
    group = runners.get_group(group_id)
    extra = frozenset(int(p) for p in group.printer_ports) if group is not None else frozenset()
    return PRINTER_PORTS | extra
