"""Counters: named serial sequences. Values are taken with one atomic update per take, so no
value is ever handed out twice, not under concurrency and not when a request is retried."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    BooleanAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import UpdateError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import Item, condition_failed, get_item, item_of, record_of, table_meta
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

KIND = "counter"


class CounterRecord(NamedTuple):
    name: str
    start: int
    step: int
    current: int  # the last value handed out (start - step before the first)
    issued: int  # values handed out since creation
    format: str | None
    reset: str  # never | daily | monthly | yearly (UTC)
    period: str  # the reset period `current` belongs to
    active: bool
    created_at: dt.datetime
    created_by: str


class _ByName(GlobalSecondaryIndex["_CounterItem"]):
    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    name = UnicodeAttribute(range_key=True)


class _CounterItem(Item):
    Meta = table_meta("counters_table")
    name = UnicodeAttribute(hash_key=True)
    kind = UnicodeAttribute(default=KIND)
    start = NumberAttribute()
    step = NumberAttribute()
    current = NumberAttribute()
    issued = NumberAttribute(default=0)
    format = UnicodeAttribute(null=True)
    reset = UnicodeAttribute(default="never")
    period = UnicodeAttribute(default="")
    active = BooleanAttribute(default=True)
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute()
    by_name = _ByName()


def _record(item: _CounterItem) -> CounterRecord:
    return record_of(CounterRecord, item)


def get(name: str) -> CounterRecord | None:
    item = get_item(_CounterItem, name)
    return _record(item) if item is not None else None


def page(limit: int, cursor: str | None) -> Page[CounterRecord]:
    def query(**page: Any) -> Any:
        return _CounterItem.by_name.query(KIND, **page)

    return read_page(query, {"name", "kind"}, limit, cursor, _record)


def add(uow: UnitOfWork, counter: CounterRecord) -> None:
    """A new counter; the condition `counter.absent` fails if the name is taken."""
    item = item_of(_CounterItem, counter, kind=KIND)
    uow.put(item, _CounterItem.name.does_not_exist(), name=ConditionName.COUNTER_ABSENT)


def deactivate(uow: UnitOfWork, name: str) -> None:
    item = _CounterItem(name)
    uow.update(
        item,
        [_CounterItem.active.set(False)],
        _CounterItem.name.exists(),
        name=ConditionName.COUNTER_EXISTS,
    )


def take(counter: CounterRecord, count: int, period: str) -> CounterRecord | None:
    """`count` values after `counter`'s current one, in one atomic update; a new `period`
    starts again at `start`. None if the counter changed meanwhile (deactivated, or another
    take began a new period): read it again and decide again."""
    item = _CounterItem(counter.name)
    step = counter.step
    active = _CounterItem.active == True  # noqa: E712 (a pynamodb condition, not a comparison)
    try:
        if counter.period == period:
            item.update(
                actions=[_CounterItem.current.add(step * count), _CounterItem.issued.add(count)],
                condition=active & (_CounterItem.period == period),
            )
        else:
            item.update(
                actions=[
                    _CounterItem.current.set(counter.start - step + step * count),
                    _CounterItem.issued.add(count),
                    _CounterItem.period.set(period),
                ],
                condition=active & (_CounterItem.period == counter.period),
            )
    except UpdateError as error:
        if condition_failed(error):
            return None
        raise
    return _record(item)  # update() read the new item back (ReturnValues ALL_NEW)


# --- blocks reserved by Runners -------------------------------------------------------------


class BlockRecord(NamedTuple):
    block_id: str  # chosen by the Runner (its journal names it before it asks): a retry is a read
    counter: str
    runner_id: str
    first: int
    size: int  # values in the block
    step: int
    period: str  # the reset period the values belong to
    reserved_at: dt.datetime


class _BlocksByRunner(GlobalSecondaryIndex["_BlockItem"]):
    class Meta:
        index_name = "by_runner"
        projection = AllProjection()

    runner_id = UnicodeAttribute(hash_key=True)
    counter = UnicodeAttribute(range_key=True)


class _BlockItem(Item):
    # In the counters table under a key no counter name can have (names have no '#'), with no
    # `kind`: blocks stay out of the counters' by_name index (and only they are in by_runner).
    Meta = table_meta("counters_table")
    name = UnicodeAttribute(hash_key=True)
    block_id = UnicodeAttribute()
    counter = UnicodeAttribute()
    runner_id = UnicodeAttribute()
    first = NumberAttribute()
    size = NumberAttribute()
    step = NumberAttribute()
    period = UnicodeAttribute()
    reserved_at = UTCDateTimeAttribute()
    by_runner = _BlocksByRunner()


def _block_key(block_id: str) -> str:
    return f"block#{block_id}"


def get_block(block_id: str) -> BlockRecord | None:
    item = get_item(_BlockItem, _block_key(block_id))
    return record_of(BlockRecord, item) if item is not None else None


def blocks_of(runner_id: str, counter: str) -> list[BlockRecord]:
    """Every block of `counter` that the Runner reserved."""
    query = _BlockItem.by_runner.query(runner_id, _BlockItem.counter == counter)
    return [record_of(BlockRecord, item) for item in query]


def reserve(uow: UnitOfWork, counter: CounterRecord, block: BlockRecord) -> None:
    """Move the counter past `block` and record the block, in the caller's transaction: the
    counter's `current` must still be what was read and its period the block's (a concurrent
    take or reservation fails the condition `counter.unchanged`: read again), and the block id
    unused (`block.absent`: the retry of a reservation that committed)."""
    last = block.first + block.step * (block.size - 1)
    item = _CounterItem(counter.name)
    active = _CounterItem.active == True  # noqa: E712 (a pynamodb condition, not a comparison)
    uow.update(
        item,
        [
            _CounterItem.current.set(last),
            _CounterItem.issued.add(block.size),
            _CounterItem.period.set(block.period),
        ],
        active
        & (_CounterItem.current == counter.current)
        & (_CounterItem.period == counter.period),
        name=ConditionName.COUNTER_UNCHANGED,
    )
    uow.put(
        item_of(_BlockItem, block, name=_block_key(block.block_id)),
        _BlockItem.name.does_not_exist(),
        name=ConditionName.BLOCK_ABSENT,
    )
