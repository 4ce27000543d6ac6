"""The print archive: one entry per printed label record (what, where, with which values and
serials, by whom); its outcome is the outcome of the job that carried it."""

from __future__ import annotations

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

STREAM = "archive"


class ArchiveByTime(GlobalSecondaryIndex["ArchiveRecord"]):
    class Meta:
        index_name = "by_time"
        projection = AllProjection()

    stream = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class ArchiveByJob(GlobalSecondaryIndex["ArchiveRecord"]):
    class Meta:
        index_name = "by_job"
        projection = AllProjection()

    job_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class ArchiveByLabel(GlobalSecondaryIndex["ArchiveRecord"]):
    class Meta:
        index_name = "by_label"
        projection = AllProjection()

    label_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class ArchiveRecord(Model):
    Meta = table_meta("archive_table")
    id = UnicodeAttribute(hash_key=True)  # arc_<ULID>
    stream = UnicodeAttribute(default=STREAM)
    job_id = UnicodeAttribute()
    record_index = NumberAttribute()  # position in the request's data stream
    label_id = UnicodeAttribute()
    label_version = NumberAttribute()
    printer = UnicodeAttribute()
    printer_id = UnicodeAttribute()
    copies = NumberAttribute()
    variables = JSONAttribute()  # the values as entered
    serials = JSONAttribute()  # counter name -> value taken for this label
    actor = UnicodeAttribute()
    subject = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    by_time = ArchiveByTime()
    by_job = ArchiveByJob()
    by_label = ArchiveByLabel()
