"""Notices to Runners that their configuration changed (printers, context, deployments): a
message on each Runner's own queue, which it is waiting at anyway, instead of Runners asking
every few seconds. Sent after the change is written; a notice that cannot be sent is made up
for by the Runner's hourly read (docs/scale.md)."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from etikett.domain.runners import runner_wakes
from etikett.store import runner_queues
from etikett.store import runners as runner_store
from etikett.store.runners import RunnerRecord

log = logging.getLogger(__name__)

CONFIG = "config"


def _tell(runners: Iterable[RunnerRecord]) -> None:
    for runner in runners:
        if runner.state != "active" or not runner.queue_url:
            continue
        try:
            runner_queues.notify(runner.queue_url, CONFIG)
        except Exception:  # the change stands; the Runner reads its configuration hourly
            log.warning("notice to Runner %s not sent", runner.id, exc_info=True)
            continue
        runner_wakes.wake_if_asleep(runner)


def runner_changed(runner_id: str) -> None:
    runner = runner_store.get_runner(runner_id)
    if runner is not None:
        _tell([runner])


def groups_changed(group_ids: Iterable[str]) -> None:
    for group_id in sorted(set(group_ids)):
        _tell(runner_store.runners_of(group_id))


def owner_changed(owner_id: str) -> None:
    """A context owner changed: a Runner, or a group (all its Runners)."""
    runner = runner_store.get_runner(owner_id)
    if runner is not None:
        _tell([runner])
    else:
        groups_changed([owner_id])
