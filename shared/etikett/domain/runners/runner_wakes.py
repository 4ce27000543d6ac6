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
limit), so that no message lands after the Runner stopped polling unwoken.

A print wakes its Runner as soon as the request is known to be good (`waking`), not when its
message is sent: the wake is published beside the print's own work (its counters, its render,
its writes), so that the woken Runner is on its way to its queue, and waiting there, while the job
is still being made (bench/README.md: a Runner's first print after idling). A wake for a print
that then fails only makes the Runner look at its queue once more."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar, copy_context
from typing import TYPE_CHECKING

from etikett import clock
from etikett.store import runner_wakes
from etikett.store.runners import RunnerRecord

if TYPE_CHECKING:  # the pool is made, and its module loaded, at a first wake: not at cold start
    from concurrent.futures import Future, ThreadPoolExecutor

log = logging.getLogger(__name__)

MARGIN = dt.timedelta(seconds=30)
# How long leaving `waking` waits for its wake: longer than a publish takes, shorter than the
# functions' time limit. A wake not published by then is logged and left (the Runner looks).
SETTLE_SECONDS = 10.0

# The Runners a request has already woken (inside `waking`): its later wakes of them are done.
_woken: ContextVar[frozenset[str]] = ContextVar("woken_runners", default=frozenset())
_pool: ThreadPoolExecutor | None = None
_pool_made = threading.Lock()


def asleep(runner: RunnerRecord, now: dt.datetime) -> bool:
    """The Runner waits for wakes and may not be polling when a message sent now arrives."""
    return runner.awake_until is not None and runner.awake_until <= now + MARGIN


def wake_if_asleep(runner: RunnerRecord) -> None:
    """Wake the Runner, if it may be asleep, for a message sent to its queue now. A wake that
    cannot be published is logged; the Runner finds the message at its next look (at least
    every few minutes, docs/scale.md)."""
    if runner.id in _woken.get() or not asleep(runner, clock.now()):
        return
    _publish(runner.id)


@contextmanager
def waking(runner: RunnerRecord | None) -> Iterator[None]:
    """Wake the Runner, if it may be asleep, beside the work done inside (published in a thread
    of its own); `wake_if_asleep` of that Runner inside does nothing more. Leaving waits for the
    wake to be published (or logged as not): a function does not answer with it in flight."""
    if runner is None or runner.id in _woken.get() or not asleep(runner, clock.now()):
        yield
        return
    # In the request's context: its logs' correlation, and whatever counts its AWS calls.
    sent = _threads().submit(copy_context().run, _publish, runner.id)
    marked = _woken.set(_woken.get() | {runner.id})
    try:
        yield
    finally:
        _woken.reset(marked)
        _settle(sent, runner.id)


def _publish(runner_id: str) -> None:
    try:
        runner_wakes.publish(runner_id)
    except Exception:  # the message is on the queue: it waits for the Runner's next look
        log.warning("wake for Runner %s not published", runner_id, exc_info=True)


def _settle(sent: Future[None], runner_id: str) -> None:
    try:
        sent.result(timeout=SETTLE_SECONDS)
    except TimeoutError:
        log.warning("wake for Runner %s not published within %.0f s", runner_id, SETTLE_SECONDS)


def _threads() -> ThreadPoolExecutor:
    global _pool
    with _pool_made:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor

            _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="wake")
        return _pool
