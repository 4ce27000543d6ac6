"""Labels: one record per label and one per saved version of its document or of its form.

Versions are numbered per label and per kind (`label`, `form`); saving one is conditional on
the latest number, so two concurrent saves cannot both become version N.
"""

from __future__ import annotations

import datetime as dt
import json
import zlib
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from pynamodb.attributes import (
    BinaryAttribute,
    BooleanAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import Item, changes, found, get_item, item_of, reads, record_of, table_meta
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

DocumentKind = Literal["label", "form"]
_META = table_meta("labels_table")
META_SK = "meta"
KIND = "label"
# DynamoDB items stop at 400 KB; a compressed document must leave room for the other attributes.
MAX_DOCUMENT_BYTES = 350_000


class LabelRecord(NamedTuple):
    id: str
    name: str
    archived: bool
    width_mm: float
    height_mm: float
    dpi: int
    latest_version: int
    released_version: int | None
    form_latest_version: int  # 0: no authored form yet
    form_released_version: int | None
    vorlage_id: str | None
    copied_from: str | None
    created_at: dt.datetime
    updated_at: dt.datetime

    def latest(self, kind: DocumentKind) -> int:
        return self.latest_version if kind == "label" else self.form_latest_version

    def released(self, kind: DocumentKind) -> int | None:
        return self.released_version if kind == "label" else self.form_released_version

    def with_latest(self, kind: DocumentKind, version: int) -> LabelRecord:
        if kind == "label":
            return self._replace(latest_version=version)
        return self._replace(form_latest_version=version)

    def with_released(self, kind: DocumentKind, version: int | None) -> LabelRecord:
        if kind == "label":
            return self._replace(released_version=version)
        return self._replace(form_released_version=version)


class VersionRecord(NamedTuple):
    """A saved label document version or form document version."""

    label_id: str
    document_kind: str  # "label" | "form"
    version: int
    status: str  # "draft" | "approved" | "retired"
    author_actor: str
    author_subject: str
    comment: str | None
    created_at: dt.datetime
    status_changed_at: dt.datetime | None
    status_changed_by: str | None
    blob: bytes  # the document, zlib-compressed JSON
    status_comment: str | None = None  # the comment of the latest status change (approval)

    @property
    def document(self) -> dict[str, Any]:
        return unpack(self.blob)


def pack(document: dict[str, Any]) -> bytes:
    return zlib.compress(json.dumps(document, separators=(",", ":")).encode(), 6)


def unpack(blob: bytes) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(zlib.decompress(blob))
    return value


def version_sk(kind: str, version: int) -> str:
    """`label#000012` / `form#000003`: zero-padded so versions sort numerically."""
    return f"{kind}#{version:06d}"


def _name_key(name: str, label_id: str) -> str:
    """Casefolded name, NUL, id: a sorted, unique range key for listing by name. The
    separator sorts below every character a name holds, so "two" comes before "two (2)"."""
    return f"{name.casefold()}\x00{label_id}"


class _ByName(GlobalSecondaryIndex["_LabelItem"]):
    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    name_key = UnicodeAttribute(range_key=True)


class _LabelItem(Item):
    Meta = _META

    id = UnicodeAttribute(hash_key=True, attr_name="label_id")
    sk = UnicodeAttribute(range_key=True, default=META_SK)
    kind = UnicodeAttribute(default=KIND)
    name = UnicodeAttribute()
    name_key = UnicodeAttribute()
    archived = BooleanAttribute(default=False)
    width_mm = NumberAttribute()
    height_mm = NumberAttribute()
    dpi = NumberAttribute()
    latest_version = NumberAttribute()
    released_version = NumberAttribute(null=True)
    form_latest_version = NumberAttribute(default=0)
    form_released_version = NumberAttribute(null=True)
    vorlage_id = UnicodeAttribute(null=True)
    copied_from = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()

    by_name = _ByName()


class _VersionItem(Item):
    Meta = _META

    label_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    document_kind = UnicodeAttribute()
    version = NumberAttribute()
    status = UnicodeAttribute()
    author_actor = UnicodeAttribute()
    author_subject = UnicodeAttribute()
    comment = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    status_changed_at = UTCDateTimeAttribute(null=True)
    status_changed_by = UnicodeAttribute(null=True)
    blob = BinaryAttribute(legacy_encoding=False, attr_name="document")
    status_comment = UnicodeAttribute(null=True)


def _label(item: _LabelItem) -> LabelRecord:
    return record_of(LabelRecord, item)


def _version(item: _VersionItem) -> VersionRecord:
    return record_of(VersionRecord, item)


def _label_item(label: LabelRecord) -> _LabelItem:
    return item_of(
        _LabelItem, label, sk=META_SK, kind=KIND, name_key=_name_key(label.name, label.id)
    )


def _version_item(version: VersionRecord) -> _VersionItem:
    return item_of(_VersionItem, version, sk=version_sk(version.document_kind, version.version))


# --- reading --------------------------------------------------------------------------------------


def get(label_id: str) -> LabelRecord | None:
    item = get_item(_LabelItem, label_id, META_SK)
    return _label(item) if item is not None else None


def get_version(label_id: str, kind: DocumentKind, version: int) -> VersionRecord | None:
    item = get_item(_VersionItem, label_id, version_sk(kind, version))
    return _version(item) if item is not None else None


def get_with_version(
    label_id: str, kind: DocumentKind, version: int
) -> tuple[LabelRecord | None, VersionRecord | None]:
    """The label and one of its versions, in one consistent read."""
    with reads() as batch:
        label = batch.get(_LabelItem, label_id, META_SK)
        named = batch.get(_VersionItem, label_id, version_sk(kind, version))
    label_item, version_item = found(label), found(named)
    return (
        _label(label_item) if label_item is not None else None,
        _version(version_item) if version_item is not None else None,
    )


def page(limit: int, cursor: str | None, archived: bool | None) -> Page[LabelRecord]:
    """Labels by name (case-insensitive); `archived` filters when given."""
    condition = None if archived is None else _LabelItem.archived == archived

    def query(**page: Any) -> Any:
        return _LabelItem.by_name.query(KIND, filter_condition=condition, **page)

    return read_page(query, {"label_id", "sk", "kind", "name_key"}, limit, cursor, _label)


def page_versions(
    label_id: str, kind: DocumentKind, limit: int, cursor: str | None
) -> Page[VersionRecord]:
    """Versions of `kind`, newest first."""

    def query(**page: Any) -> Any:
        return _VersionItem.query(
            label_id, _VersionItem.sk.startswith(f"{kind}#"), scan_index_forward=False, **page
        )

    return read_page(query, {"label_id", "sk"}, limit, cursor, _version)


# --- writing --------------------------------------------------------------------------------------


def add(uow: UnitOfWork, label: LabelRecord, first: VersionRecord) -> None:
    """A new label with its first version."""
    uow.put(_label_item(label), _LabelItem.id.does_not_exist(), name=ConditionName.LABEL_ABSENT)
    uow.put(
        _version_item(first),
        _VersionItem.label_id.does_not_exist(),
        name=ConditionName.VERSION_ABSENT,
    )


def add_version(
    uow: UnitOfWork, before: LabelRecord, after: LabelRecord, version: VersionRecord
) -> None:
    """`version` becomes the latest of its kind, unless another save got there first
    (`version.latest` fails); `after` is the label with its new latest number (and size)."""
    kind: DocumentKind = "label" if version.document_kind == "label" else "form"
    latest = _LabelItem.latest_version if kind == "label" else _LabelItem.form_latest_version
    uow.update(
        _LabelItem(before.id, META_SK),
        changes(_LabelItem, before, after),
        latest == before.latest(kind),
        name=ConditionName.VERSION_LATEST,
    )
    uow.put(
        _version_item(version),
        _VersionItem.label_id.does_not_exist(),
        name=ConditionName.VERSION_ABSENT,
    )


def update(uow: UnitOfWork, before: LabelRecord, after: LabelRecord) -> None:
    """The label's metadata (name, archived, …) as `after` says; `label.exists` fails if the
    label was deleted meanwhile."""
    actions = changes(_LabelItem, before, after)
    if after.name != before.name:
        actions.append(_LabelItem.name_key.set(_name_key(after.name, after.id)))
    uow.update(
        _LabelItem(before.id, META_SK),
        actions,
        _LabelItem.id.exists(),
        name=ConditionName.LABEL_EXISTS,
    )


def release(uow: UnitOfWork, before: LabelRecord, after: LabelRecord, kind: DocumentKind) -> None:
    """Which version of `kind` is released, as `after` says; `label.released_unchanged` fails
    when another release or withdrawal got there first."""
    released = _LabelItem.released_version if kind == "label" else _LabelItem.form_released_version
    previous = before.released(kind)
    condition = released == previous if previous else released.does_not_exist()
    uow.update(
        _LabelItem(before.id, META_SK),
        changes(_LabelItem, before, after),
        condition,
        name=ConditionName.LABEL_RELEASED_UNCHANGED,
    )


def set_version_status(
    uow: UnitOfWork,
    version: VersionRecord,
    status: str,
    at: dt.datetime,
    by: str,
    comment: str | None = None,
) -> None:
    """A version's status moves on, with the change's comment (kept on the version);
    `version.status_unchanged` fails when it moved meanwhile."""
    uow.update(
        _VersionItem(version.label_id, version_sk(version.document_kind, version.version)),
        [
            _VersionItem.status.set(status),
            _VersionItem.status_changed_at.set(at),
            _VersionItem.status_changed_by.set(by),
            _VersionItem.status_comment.set(comment)
            if comment
            else _VersionItem.status_comment.remove(),
        ],
        _VersionItem.status == version.status,
        name=ConditionName.VERSION_STATUS_UNCHANGED,
    )


def delete(uow: UnitOfWork, label: LabelRecord) -> None:
    uow.delete(
        _LabelItem(label.id, META_SK), _LabelItem.id.exists(), name=ConditionName.LABEL_EXISTS
    )


def delete_versions(label_id: str) -> None:
    """Sweep a deleted label's versions."""
    with _VersionItem.batch_write() as batch:
        for item in _VersionItem.query(label_id, attributes_to_get=["label_id", "sk"]):
            batch.delete(item)
