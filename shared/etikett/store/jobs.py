"""Jobs handed to Runners (discovery, raw and print jobs), with their message history and
outcome; and where a job's printer data waits for its Runner (the queue message or S3)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlsplit

from pynamodb.attributes import (
    JSONAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.expressions.condition import Condition
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.settings import get_settings
from etikett.store import clients, wire_items
from etikett.store.base import Item, get_item, table_meta
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork


class JobMessage(NamedTuple):
    at: dt.datetime
    level: str  # info | warning | error
    text: str


class JobRecord(NamedTuple):
    id: str  # job_…
    kind: str  # discovery | raw | print
    status: str  # rendering | queued | running | held | sent | confirmed | succeeded | …
    runner_id: str
    printer_id: str | None
    payload: dict[str, Any]  # what the Runner needs (targets, uri, data reference, copies, …)
    messages: tuple[JobMessage, ...]
    outcome: str | None  # the last outcome (held, sent, …), kept while running
    outcome_reason: str | None
    outcome_at: dt.datetime | None
    result: dict[str, Any] | None
    attempts: int
    created_at: dt.datetime
    created_by: str
    updated_at: dt.datetime
    finished_at: dt.datetime | None
    receipt: str | None = None  # the queue's receipt of the latest claim
    receipt_at: dt.datetime | None = None  # when that receipt's visibility was last set


class _Message(MapAttribute[str, Any]):
    at = UTCDateTimeAttribute()
    level = UnicodeAttribute()
    text = UnicodeAttribute()


class _ByRunner(GlobalSecondaryIndex["_JobItem"]):
    class Meta:
        index_name = "by_runner"
        projection = AllProjection()

    runner_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class _JobItem(Item):
    Meta = table_meta("jobs_table")
    id = UnicodeAttribute(hash_key=True)
    kind = UnicodeAttribute()
    status = UnicodeAttribute()
    runner_id = UnicodeAttribute()
    printer_id = UnicodeAttribute(null=True)
    payload = JSONAttribute()
    messages = ListAttribute(of=_Message, default=list)
    outcome = UnicodeAttribute(null=True)
    outcome_reason = UnicodeAttribute(null=True)
    outcome_at = UTCDateTimeAttribute(null=True)
    result = JSONAttribute(null=True)
    attempts = NumberAttribute(default=0)
    receipt = UnicodeAttribute(null=True)  # the queue's receipt of the latest claim
    receipt_at = UTCDateTimeAttribute(null=True)  # when its visibility was last set
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute()
    updated_at = UTCDateTimeAttribute()
    finished_at = UTCDateTimeAttribute(null=True)
    by_runner = _ByRunner()


def _message_item(message: JobMessage) -> _Message:
    return _Message(at=message.at, level=message.level, text=message.text)


def _record(item: _JobItem) -> JobRecord:
    return JobRecord(
        id=item.id,
        kind=item.kind,
        status=item.status,
        runner_id=item.runner_id,
        printer_id=item.printer_id,
        payload=item.payload,
        messages=tuple(JobMessage(at=m.at, level=m.level, text=m.text) for m in item.messages),
        outcome=item.outcome,
        outcome_reason=item.outcome_reason,
        outcome_at=item.outcome_at,
        result=item.result,
        attempts=int(item.attempts or 0),
        created_at=item.created_at,
        created_by=item.created_by,
        updated_at=item.updated_at,
        finished_at=item.finished_at,
        receipt=item.receipt,
        receipt_at=item.receipt_at,
    )


def _values(job: JobRecord) -> dict[str, Any]:
    """What the job's item is made of (`_JobItem(**values)`; `add` writes it without one)."""
    return dict(
        id=job.id,
        kind=job.kind,
        status=job.status,
        runner_id=job.runner_id,
        printer_id=job.printer_id,
        payload=job.payload,
        messages=[_message_item(m) for m in job.messages],
        outcome=job.outcome,
        outcome_reason=job.outcome_reason,
        outcome_at=job.outcome_at,
        result=job.result,
        attempts=job.attempts,
        created_at=job.created_at,
        created_by=job.created_by,
        updated_at=job.updated_at,
        finished_at=job.finished_at,
        receipt=job.receipt,
        receipt_at=job.receipt_at,
    )


# --- reading --------------------------------------------------------------------------------------


def get(job_id: str) -> JobRecord | None:
    item = get_item(_JobItem, job_id)
    return _record(item) if item is not None else None


def page_for_runner(runner_id: str, limit: int, cursor: str | None) -> Page[JobRecord]:
    """A Runner's jobs, newest first."""

    def query(**page: Any) -> Any:
        return _JobItem.by_runner.query(runner_id, scan_index_forward=False, **page)

    return read_page(query, {"id", "runner_id"}, limit, cursor, _record)


def newest_of_runner(runner_id: str, limit: int) -> list[JobRecord]:
    items = _JobItem.by_runner.query(runner_id, scan_index_forward=False, limit=limit)
    return [_record(item) for item in items]


def of_runner(runner_id: str) -> list[JobRecord]:
    return [_record(item) for item in _JobItem.by_runner.query(runner_id)]


# --- writing --------------------------------------------------------------------------------------


# Every new job's condition, serialized once (a sync of offline prints writes thousands).
_NEW = wire_items.prepared(_JobItem.id.does_not_exist())


def add(uow: UnitOfWork, job: JobRecord) -> None:
    request = wire_items.put(_JobItem, _values(job), _NEW)
    uow.put_request(request, name=ConditionName.JOB_ABSENT)


def update(
    uow: UnitOfWork,
    job: JobRecord | str,
    changes: Mapping[str, Any],
    *,
    messages: Collection[JobMessage] = (),
    status_in: Collection[str] | None = None,
    open_only: bool = False,
    runner_id: str | None = None,
    name: ConditionName = ConditionName.JOB_EXPECTED,
) -> None:
    """Set the fields in `changes` (None removes one) and append `messages`, provided the job's
    status is one of `status_in`, with `open_only` it has not finished, and with `runner_id` it
    is that Runner's; the condition `name` fails otherwise (also when there is no such job).
    `job`: the record (only its id is used) or the id."""
    actions: list[Any] = []
    for field, value in changes.items():
        attribute = getattr(_JobItem, field)
        actions.append(attribute.remove() if value is None else attribute.set(value))
    if messages:
        appended = [_message_item(m) for m in messages]
        actions.append(_JobItem.messages.set(_JobItem.messages.append(appended)))
    condition: Condition | None = None
    if status_in is not None:
        condition = _JobItem.status.is_in(*status_in)
    if open_only:
        unfinished = _JobItem.finished_at.does_not_exist()
        condition = unfinished if condition is None else condition & unfinished
    if runner_id is not None:
        owned = _JobItem.runner_id == runner_id
        condition = owned if condition is None else condition & owned
    uow.update(_JobItem(job if isinstance(job, str) else job.id), actions, condition, name=name)


def updated(
    job: JobRecord, changes: Mapping[str, Any], messages: Collection[JobMessage] = ()
) -> JobRecord:
    """The record as `update` wrote it, once its transaction has committed: an answer without
    reading the job again. (A message another writer appended meanwhile is not in it; a change
    of status would have failed the update's condition.)"""
    return job._replace(**changes, messages=(*job.messages, *messages))


# --- printer data ---------------------------------------------------------------------------------


def store_data(job_id: str, data: bytes) -> str:
    """Large job bytes go to S3, not into the queue (256 KB) or the table (400 KB)."""
    key = f"jobs/{job_id}/data"
    clients.client("s3").put_object(
        Bucket=get_settings().required("assets_bucket"), Key=key, Body=data
    )
    return key


def data_url(key: str) -> str:
    """A URL the Runner fetches the bytes from, valid for an hour."""
    return str(
        clients.client("s3").generate_presigned_url(
            "get_object",
            Params={"Bucket": get_settings().required("assets_bucket"), "Key": key},
            ExpiresIn=3600,
        )
    )


def data_origin() -> str:
    """scheme://host[:port] of every `data_url`: the one storage a Runner fetches job bytes
    from (presigning signs locally; nothing is sent)."""

    parts = urlsplit(data_url("jobs/origin/data"))
    return f"{parts.scheme}://{parts.netloc}"


def load_data(key: str) -> bytes:
    response = clients.client("s3").get_object(
        Bucket=get_settings().required("assets_bucket"), Key=key
    )
    return bytes(response["Body"].read())


def get_many(job_ids: set[str]) -> dict[str, JobRecord]:
    """Several jobs by id in one batch read; absent ones are left out."""
    if not job_ids:
        return {}
    return {item.id: _record(item) for item in _JobItem.batch_get(list(job_ids))}
