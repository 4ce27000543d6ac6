"""The jobs table: work handed to Runners (discovery, raw print jobs, later print jobs), with
their message history and outcome."""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta


class JobMessage(MapAttribute):
    at = UTCDateTimeAttribute()
    level = UnicodeAttribute()  # info | warning | error
    text = UnicodeAttribute()


class JobsByRunner(GlobalSecondaryIndex["JobRecord"]):
    class Meta:
        index_name = "by_runner"
        projection = AllProjection()

    runner_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class JobRecord(Model):
    Meta = table_meta("jobs_table")
    id = UnicodeAttribute(hash_key=True)  # job_…
    kind = UnicodeAttribute()  # discovery | raw | print
    status = (
        UnicodeAttribute()
    )  # queued | running | held | sent | confirmed | succeeded | failed | cancelled
    runner_id = UnicodeAttribute()
    printer_id = UnicodeAttribute(null=True)
    payload = JSONAttribute()  # what the Runner needs (targets, uri, data reference, copies, …)
    messages = ListAttribute(of=JobMessage, default=list)
    outcome = UnicodeAttribute(null=True)  # the last outcome (held, sent, …), kept while running
    outcome_reason = UnicodeAttribute(null=True)
    outcome_at = UTCDateTimeAttribute(null=True)  # when that outcome was recorded
    result = JSONAttribute(null=True)
    attempts = NumberAttribute(default=0)
    created_at = UTCDateTimeAttribute()
    created_by = UnicodeAttribute()
    updated_at = UTCDateTimeAttribute()
    finished_at = UTCDateTimeAttribute(null=True)
    by_runner = JobsByRunner()
