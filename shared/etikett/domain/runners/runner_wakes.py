"""Which Runners a job or notice on their queue must wake, and waking them.

A Runner that waits for wakes (docs/scale.md) polls its queue only while it is *awake*: for
`runner_awake_seconds` after it said so (its heartbeat with `awake`, which sets `awake_until`),
which it does when woken and again while jobs keep coming. A message sent to its queue while it
is awake is received by that polling; otherwise the Runner is woken. A job's wake goes out just
before its message: the woken Runner's long poll (20 s) meets the message when it lands, and the
Runner's way to its queue overlaps the message's. A Runner that never said it waits for wakes
polls all the time and is never woken.

The decision is taken from the Runner's record as the caller read it, which may be a moment old
by the time the message is sent: a Runner counts as awake only while more than `MARGIN` of its
promise is left, longer than any request takes from its read to its send (the functions' time
limit), so that no message lands after the Runner stopped polling unwoken."""

from __future__ import annotations

import datetime as dt
import logging

from etikett import clock
from etikett.store import runner_wakes
from etikett.store.runners import RunnerRecord

log = logging.getLogger(__name__)

MARGIN = dt.timedelta(seconds=30)


def asleep(runner: RunnerRecord, now: dt.datetime) -> bool:
    """The Runner waits for wakes and may not be polling when a message sent now arrives."""
    return runner.awake_until is not None and runner.awake_until <= now + MARGIN


def wake_if_asleep(runner: RunnerRecord) -> None:
    """Wake the Runner, if it may be asleep, for a message sent to its queue now. A wake that
    cannot be published is logged; the Runner finds the message at its next look (at least
    every few minutes, docs/scale.md)."""
    if not asleep(runner, clock.now()):
        return
    try:
        runner_wakes.publish(runner.id)
    except Exception:  # the message is on the queue: it waits for the Runner's next look
        log.warning("wake for Runner %s not published", runner.id, exc_info=True)
