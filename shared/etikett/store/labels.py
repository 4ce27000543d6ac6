"""The labels table: one metadata item per label and one item per saved label or form version."""

from __future__ import annotations

import json
import zlib
from typing import Any

from pynamodb.attributes import (
    BinaryAttribute,
    BooleanAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

_META = table_meta("labels_table")

META_SK = "meta"
# DynamoDB items stop at 400 KB; a compressed document must leave room for the other attributes.
MAX_DOCUMENT_BYTES = 350_000


def version_sk(kind: str, version: int) -> str:
    """`label#000012` / `form#000003`: zero-padded so versions sort numerically."""
    return f"{kind}#{version:06d}"


def pack(document: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes) -> dict[str, Any]:
    return json.loads(zlib.decompress(blob))


class LabelsByName(GlobalSecondaryIndex["LabelRecord"]):
    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    name_key = UnicodeAttribute(range_key=True)


class LabelRecord(Model):
    Meta = _META

    label_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True, default=META_SK)
    kind = UnicodeAttribute(default="label")
    name = UnicodeAttribute()
    name_key = UnicodeAttribute()  # casefolded name + "#" + id: sorted, unique range key
    archived = BooleanAttribute(default=False)
    width_mm = NumberAttribute()
    height_mm = NumberAttribute()
    dpi = NumberAttribute()
    latest_version = NumberAttribute()
    released_version = NumberAttribute(null=True)
    form_latest_version = NumberAttribute(default=0)  # 0: no authored form yet
    form_released_version = NumberAttribute(null=True)
    vorlage_id = UnicodeAttribute(null=True)
    copied_from = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()

    by_name = LabelsByName()


class VersionRecord(Model):
    """A saved label document version (`label#…`) or form document version (`form#…`)."""

    Meta = _META

    label_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    document_kind = UnicodeAttribute()  # "label" | "form"
    version = NumberAttribute()
    status = UnicodeAttribute()  # "draft" | "approved" | "retired"
    author_actor = UnicodeAttribute()
    author_subject = UnicodeAttribute()
    comment = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    status_changed_at = UTCDateTimeAttribute(null=True)
    status_changed_by = UnicodeAttribute(null=True)
    document = BinaryAttribute(legacy_encoding=False)  # zlib-compressed JSON
