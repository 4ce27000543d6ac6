"""Flows: one record per flow, per saved version, per recorded run, and a marker per deployment
that uses the flow (a flow in use cannot be deleted)."""

from __future__ import annotations

import datetime as dt
import json
import zlib
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    BinaryAttribute,
    ListAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import PutError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import (
    Item,
    changes,
    condition_failed,
    get_item,
    item_of,
    item_too_large,
    record_of,
    table_meta,
    too_large,
)
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

_META = table_meta("flows_table")
META_SK = "meta"
KIND = "flow"
MAX_DOCUMENT_BYTES = 350_000  # compressed; an item stops at 400 KB
MAX_TRACE_BYTES = 300_000


class FlowRecord(NamedTuple):
    id: str  # flw_…
    name: str
    description: str | None
    latest_version: int
    created_at: dt.datetime
    updated_at: dt.datetime


class FlowVersionRecord(NamedTuple):
    flow_id: str
    version: int
    author_actor: str
    author_subject: str
    comment: str | None
    created_at: dt.datetime
    blob: bytes | None  # the document, zlib-compressed JSON (None when listed without it)

    @property
    def document(self) -> dict[str, Any]:
        assert self.blob is not None, "read the version itself for its document"
        value: dict[str, Any] = unpack(self.blob)
        return value


class FlowRunRecord(NamedTuple):
    """A run of a flow version: a dry run, or a Runner's run of one trigger event."""

    flow_id: str
    id: str
    version: int
    deployment_id: str | None
    runner_id: str | None
    trigger_node: str
    trigger_source: str | None
    started_at: dt.datetime
    finished_at: dt.datetime
    outcome: str
    records: int
    job_ids: tuple[str, ...]
    trace_blob: bytes  # zlib-compressed JSON

    @property
    def trace(self) -> Any:
        return unpack(self.trace_blob)


def pack(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, separators=(",", ":"), default=str).encode(), 6)


def unpack(blob: bytes) -> Any:
    return json.loads(zlib.decompress(blob))


def packed_trace(trace: Any) -> bytes:
    """A run's trace as stored: compressed, or a note that it was too large to keep."""
    blob = pack(trace)
    if len(blob) > MAX_TRACE_BYTES:
        blob = pack({"truncated": True, "bytes": len(blob)})
    return blob


def version_sk(version: int) -> str:
    return f"version#{version:06d}"


def run_sk(run_id: str) -> str:
    return f"run#{run_id}"


def _name_key(name: str, flow_id: str) -> str:
    """Casefolded name + "#" + id: sorted and unique."""
    return f"{name.casefold()}#{flow_id}"


class _ByName(GlobalSecondaryIndex["_FlowItem"]):
    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    name_key = UnicodeAttribute(range_key=True)


class _FlowItem(Item):
    Meta = _META
    id = UnicodeAttribute(hash_key=True, attr_name="flow_id")
    sk = UnicodeAttribute(range_key=True, default=META_SK)
    kind = UnicodeAttribute(default=KIND)
    name = UnicodeAttribute()
    name_key = UnicodeAttribute()
    description = UnicodeAttribute(null=True)
    latest_version = NumberAttribute()
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()
    # How many deployments claim the flow (`mark_used`); a flow is deleted only at 0 or without
    # it (flows claimed before it existed are caught by their use items, read first).
    uses = NumberAttribute(null=True)
    by_name = _ByName()


class _VersionItem(Item):
    Meta = _META
    flow_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    version = NumberAttribute()
    author_actor = UnicodeAttribute()
    author_subject = UnicodeAttribute()
    comment = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    blob = BinaryAttribute(legacy_encoding=False, attr_name="document", null=True)


class _RunItem(Item):
    Meta = _META
    flow_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)  # run#<run id>
    id = UnicodeAttribute()
    version = NumberAttribute()
    deployment_id = UnicodeAttribute(null=True)
    runner_id = UnicodeAttribute(null=True)
    trigger_node = UnicodeAttribute()
    trigger_source = UnicodeAttribute(null=True)
    started_at = UTCDateTimeAttribute()
    finished_at = UTCDateTimeAttribute()
    outcome = UnicodeAttribute()
    records = NumberAttribute()
    job_ids = ListAttribute(of=UnicodeAttribute, default=list)
    trace_blob = BinaryAttribute(legacy_encoding=False, attr_name="trace")


class _UseItem(Item):
    """Marks that a deployment uses the flow."""

    Meta = _META
    flow_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)  # use#<deployment id>
    deployment_id = UnicodeAttribute()


def _flow(item: _FlowItem) -> FlowRecord:
    return record_of(FlowRecord, item)


def _version(item: _VersionItem) -> FlowVersionRecord:
    return record_of(FlowVersionRecord, item)


def _run(item: _RunItem) -> FlowRunRecord:
    return record_of(FlowRunRecord, item)


def _flow_item(flow: FlowRecord) -> _FlowItem:
    return item_of(_FlowItem, flow, sk=META_SK, kind=KIND, name_key=_name_key(flow.name, flow.id))


def _version_item(version: FlowVersionRecord) -> _VersionItem:
    return item_of(_VersionItem, version, sk=version_sk(version.version))


# --- flows and versions ---------------------------------------------------------------------------


def get(flow_id: str) -> FlowRecord | None:
    item = get_item(_FlowItem, flow_id, META_SK)
    return _flow(item) if item is not None else None


def get_version(flow_id: str, version: int) -> FlowVersionRecord | None:
    item = get_item(_VersionItem, flow_id, version_sk(version))
    return _version(item) if item is not None else None


def page(limit: int, cursor: str | None) -> Page[FlowRecord]:
    def query(**page: Any) -> Any:
        return _FlowItem.by_name.query(KIND, **page)

    return read_page(query, {"flow_id", "sk", "kind", "name_key"}, limit, cursor, _flow)


def page_versions(flow_id: str, limit: int, cursor: str | None) -> Page[FlowVersionRecord]:
    """Versions newest first, without their documents."""

    def query(**page: Any) -> Any:
        return _VersionItem.query(
            flow_id,
            _VersionItem.sk.startswith("version#"),
            scan_index_forward=False,
            attributes_to_get=[
                "flow_id",
                "sk",
                "version",
                "author_actor",
                "author_subject",
                "comment",
                "created_at",
            ],
            **page,
        )

    return read_page(query, {"flow_id", "sk"}, limit, cursor, _version)


def add(uow: UnitOfWork, flow: FlowRecord, first: FlowVersionRecord) -> None:
    uow.put(_flow_item(flow), _FlowItem.id.does_not_exist(), name=ConditionName.FLOW_ABSENT)
    uow.put(
        _version_item(first),
        _VersionItem.flow_id.does_not_exist(),
        name=ConditionName.VERSION_ABSENT,
    )


def add_version(
    uow: UnitOfWork, before: FlowRecord, after: FlowRecord, version: FlowVersionRecord
) -> None:
    """`version` becomes the latest, unless another was saved since `before`
    (`flow.latest` fails, also when the flow was deleted)."""
    uow.update(
        _FlowItem(before.id, META_SK),
        changes(_FlowItem, before, after),
        _FlowItem.latest_version == before.latest_version,
        name=ConditionName.FLOW_LATEST,
    )
    uow.put(
        _version_item(version),
        _VersionItem.flow_id.does_not_exist(),
        name=ConditionName.VERSION_ABSENT,
    )


def update(uow: UnitOfWork, before: FlowRecord, after: FlowRecord) -> None:
    """`flow.exists` fails when the flow was deleted meanwhile."""
    actions = changes(_FlowItem, before, after)
    if after.name != before.name:
        actions.append(_FlowItem.name_key.set(_name_key(after.name, after.id)))
    uow.update(
        _FlowItem(before.id, META_SK),
        actions,
        _FlowItem.id.exists(),
        name=ConditionName.FLOW_EXISTS,
    )


def delete(uow: UnitOfWork, flow: FlowRecord) -> None:
    """`flow.deletable` fails when the flow is gone or a deployment claims it (in the same
    write: a claim between a check and the delete is never lost)."""
    unclaimed = _FlowItem.uses.does_not_exist() | (_FlowItem.uses <= 0)
    uow.delete(
        _FlowItem(flow.id, META_SK),
        _FlowItem.id.exists() & unclaimed,
        name=ConditionName.FLOW_DELETABLE,
    )


def delete_versions(flow_id: str) -> None:
    """Sweep what a deleted flow leaves: its versions and runs (the whole partition)."""
    with _VersionItem.batch_write() as batch:
        for item in _VersionItem.query(flow_id, attributes_to_get=["flow_id", "sk"]):
            batch.delete(item)


# --- deployments that use a flow ------------------------------------------------------------------


def deployments_using(flow_id: str) -> list[str]:
    return [
        item.deployment_id
        for item in _UseItem.query(flow_id, _UseItem.sk.startswith("use#"), limit=20)
    ]


def mark_used(uow: UnitOfWork, flow_id: str, deployment_id: str) -> None:
    """The deployment claims the flow: its use item, and the flow's count of claims
    (`flow.claimable` fails when the flow is gone, `flow.unclaimed` when the deployment claims
    it already)."""
    change_claims(uow, flow_id, added=[deployment_id], removed=[])


def unmark_used(uow: UnitOfWork, flow_id: str, deployment_id: str) -> None:
    """The deployment no longer claims the flow (`flow.claimed` fails if it did not)."""
    change_claims(uow, flow_id, added=[], removed=[deployment_id])


def change_claims(uow: UnitOfWork, flow_id: str, *, added: list[str], removed: list[str]) -> None:
    """Claims of deployments on the flow come and go in one change (a transaction may write
    the flow's item only once)."""
    for deployment_id in added:
        item = _UseItem(flow_id=flow_id, sk=f"use#{deployment_id}", deployment_id=deployment_id)
        uow.put(item, _UseItem.sk.does_not_exist(), name=ConditionName.FLOW_UNCLAIMED)
    for deployment_id in removed:
        uow.delete(
            _UseItem(flow_id, f"use#{deployment_id}"),
            _UseItem.sk.exists(),
            name=ConditionName.FLOW_CLAIMED,
        )
    if len(added) != len(removed):
        uow.update(
            _FlowItem(flow_id, META_SK),
            [_FlowItem.uses.add(len(added) - len(removed))],
            _FlowItem.id.exists(),
            name=ConditionName.FLOW_CLAIMABLE,
        )


# --- runs -----------------------------------------------------------------------------------------


def add_run(run: FlowRunRecord) -> bool:
    """False when the run was recorded already (a Runner that reports it again after a retry)."""
    item = item_of(_RunItem, run, sk=run_sk(run.id))
    try:
        item.save(condition=_RunItem.sk.does_not_exist())
    except PutError as error:
        if condition_failed(error):
            return False
        if item_too_large(error):
            raise too_large() from None
        raise
    return True


def get_run(flow_id: str, run_id: str) -> FlowRunRecord | None:
    item = get_item(_RunItem, flow_id, run_sk(run_id))
    return _run(item) if item is not None else None


def page_runs(
    flow_id: str,
    *,
    deployment_id: str | None,
    runner_id: str | None,
    outcome: str | None,
    limit: int,
    cursor: str | None,
) -> Page[FlowRunRecord]:
    """Newest first. The filters narrow each page (a page may hold fewer than `limit`)."""
    condition = None
    for attribute, value in (
        (_RunItem.deployment_id, deployment_id),
        (_RunItem.runner_id, runner_id),
        (_RunItem.outcome, outcome),
    ):
        if value is not None:
            term = attribute == value
            condition = term if condition is None else condition & term

    def query(**page: Any) -> Any:
        return _RunItem.query(
            flow_id,
            _RunItem.sk.startswith("run#"),
            filter_condition=condition,
            scan_index_forward=False,
            **page,
        )

    return read_page(query, {"flow_id", "sk"}, limit, cursor, _run)
