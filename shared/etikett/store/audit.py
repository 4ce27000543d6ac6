"""The audit table: one immutable entry per mutating operation, indexed for the log's filters."""

from __future__ import annotations

from pynamodb.attributes import MapAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

AUDIT_TABLE_ENV = "ETIKETT_AUDIT_TABLE"
STREAM = "audit"


class AuditByTime(GlobalSecondaryIndex["AuditRecord"]):
    class Meta:
        index_name = "by_time"
        projection = AllProjection()

    stream = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class AuditBySubject(GlobalSecondaryIndex["AuditRecord"]):
    class Meta:
        index_name = "by_subject"
        projection = AllProjection()

    subject = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class AuditByOperation(GlobalSecondaryIndex["AuditRecord"]):
    class Meta:
        index_name = "by_operation"
        projection = AllProjection()

    operation_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class AuditByTarget(GlobalSecondaryIndex["AuditRecord"]):
    class Meta:
        index_name = "by_target"
        projection = AllProjection()

    target_id = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class AuditRecord(Model):
    Meta = table_meta(AUDIT_TABLE_ENV, "AuditTable")

    id = UnicodeAttribute(hash_key=True)  # aud_<ULID>: sorts by time
    stream = UnicodeAttribute(default=STREAM)
    at = UTCDateTimeAttribute()
    actor = UnicodeAttribute()  # "human" | "service" | "anonymous"
    subject = UnicodeAttribute()
    operation_id = UnicodeAttribute()
    target_id = UnicodeAttribute(null=True)
    outcome = UnicodeAttribute()  # "success" | "refused"
    code = UnicodeAttribute(null=True)  # the problem code of a refusal
    request_id = UnicodeAttribute(null=True)
    details = MapAttribute(null=True)  # before/after versions and similar; never a secret

    by_time = AuditByTime()
    by_subject = AuditBySubject()
    by_operation = AuditByOperation()
    by_target = AuditByTarget()
