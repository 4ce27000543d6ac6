"""The print archive: one entry per printed label record (what, where, with which values and
serials, by whom); its outcome is the outcome of the job that carried it."""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    BooleanAttribute,
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store import wire_items
from etikett.store.base import Item, get_item, record_of, table_meta, values_of
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

STREAM = "archive"


class ArchiveRecord(NamedTuple):
    id: str  # arc_<ULID>
    job_id: str
    record_index: int  # position in the request's data stream
    label_id: str
    label_version: int
    printer: str
    printer_id: str
    copies: int
    variables: dict[str, Any]  # the values as entered
    serials: dict[str, Any]  # counter name -> value taken for this label
    actor: str
    subject: str
    created_at: dt.datetime
    # Printed by a Runner while the service was away, and synced since: when it printed (its
    # entry's `created_at` is the same time) and what the sync found wrong, if anything.
    printed_offline: bool = False
    printed_at: dt.datetime | None = None
    flag: str | None = None


class _ByTime(GlobalSecondaryIndex["_ArchiveItem"]):
    class Meta:
        index_name = "by_time"
        projection = AllProjection()

    stream = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _ByJob(GlobalSecondaryIndex["_ArchiveItem"]):
    class Meta:
        index_name = "by_job"
        projection = AllProjection()

    job_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _ByLabel(GlobalSecondaryIndex["_ArchiveItem"]):
    class Meta:
        index_name = "by_label"
        projection = AllProjection()

    label_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _ArchiveItem(Item):
    Meta = table_meta("archive_table")
    id = UnicodeAttribute(hash_key=True)
    stream = UnicodeAttribute(default=STREAM)
    job_id = UnicodeAttribute()
    record_index = NumberAttribute()
    label_id = UnicodeAttribute()
    label_version = NumberAttribute()
    printer = UnicodeAttribute()
    printer_id = UnicodeAttribute()
    copies = NumberAttribute()
    variables = JSONAttribute()
    serials = JSONAttribute()
    actor = UnicodeAttribute()
    subject = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    printed_offline = BooleanAttribute(null=True)
    printed_at = UTCDateTimeAttribute(null=True)
    flag = UnicodeAttribute(null=True)
    by_time = _ByTime()
    by_job = _ByJob()
    by_label = _ByLabel()


def _record(item: _ArchiveItem) -> ArchiveRecord:
    return record_of(ArchiveRecord, item)


def add(uow: UnitOfWork, entries: list[ArchiveRecord]) -> None:
    """Entries written with their job, in its transaction."""
    for entry in entries:
        uow.put_request(wire_items.put(_ArchiveItem, values_of(entry, stream=STREAM)))


# Batches of 25 (BatchWriteItem's most) sent by this many threads at once: a 1,000-record
# stream's 40 batches one after another were most of its `POST /print` (a round trip each).
BATCH = wire_items.BATCH_MOST
BATCHES_AT_ONCE = 4


def add_all(entries: list[ArchiveRecord]) -> None:
    """Many entries (a long data stream), in batches, several at once; every entry is written
    (pynamodb retries what DynamoDB left unprocessed) or the first failure is raised."""
    chunks = [entries[start : start + BATCH] for start in range(0, len(entries), BATCH)]
    if len(chunks) <= 1:
        _write(entries)
        return
    with ThreadPoolExecutor(min(BATCHES_AT_ONCE, len(chunks))) as pool:
        for written in [pool.submit(_write, chunk) for chunk in chunks]:
            written.result()


def _write(entries: list[ArchiveRecord]) -> None:
    # The items in wire form: building a model per entry cost more than the rest of the batch.
    items = [wire_items.item(_ArchiveItem, values_of(entry, stream=STREAM)) for entry in entries]
    wire_items.batch_put(_ArchiveItem, items)


def get(entry_id: str) -> ArchiveRecord | None:
    item = get_item(_ArchiveItem, entry_id)
    return _record(item) if item is not None else None


def page(
    limit: int, cursor: str | None, *, label_id: str | None, job_id: str | None
) -> Page[ArchiveRecord]:
    """A job's labels in print order; a label's, or everything, newest first."""
    index: Any
    if job_id is not None:
        index, value, keys = _ArchiveItem.by_job, job_id, {"id", "job_id"}
    elif label_id is not None:
        index, value, keys = _ArchiveItem.by_label, label_id, {"id", "label_id"}
    else:
        index, value, keys = _ArchiveItem.by_time, STREAM, {"id", "stream"}
    forward = job_id is not None

    def query(**page: Any) -> Any:
        return index.query(value, scan_index_forward=forward, **page)

    return read_page(query, keys, limit, cursor, _record)
