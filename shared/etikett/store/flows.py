"""The flows table and its repository: one item per flow, per saved version, per recorded run,
and a marker per deployment that uses the flow. The domain speaks to it in the product's words;
conditions and transactions stay here."""

from __future__ import annotations

import json
import zlib
from datetime import datetime
from typing import Any

from pynamodb.attributes import (
    BinaryAttribute,
    ListAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import PutError, TransactWriteError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.audit import AuditRecord
from etikett.store.base import cancellation_codes, table_meta, transaction
from etikett.store.pages import Page, read_page

_META = table_meta("flows_table")
META_SK = "meta"
MAX_DOCUMENT_BYTES = 350_000  # compressed; an item stops at 400 KB
MAX_TRACE_BYTES = 300_000


class StaleVersion(Exception):
    """Someone saved a version after the one the change was made against."""


class FlowGone(Exception):
    """The flow was deleted (or never existed) while the change was being made."""


class FlowInUse(Exception):
    def __init__(self, deployment_ids: list[str]) -> None:
        super().__init__(", ".join(deployment_ids))
        self.deployment_ids = deployment_ids


def pack(value: Any) -> bytes:
    return zlib.compress(json.dumps(value, separators=(",", ":"), default=str).encode(), 6)


def unpack(blob: bytes) -> Any:
    return json.loads(zlib.decompress(blob))


def version_sk(version: int) -> str:
    return f"version#{version:06d}"


class FlowsByName(GlobalSecondaryIndex["FlowRecord"]):
    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    name_key = UnicodeAttribute(range_key=True)


class FlowRecord(Model):
    Meta = _META

    flow_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True, default=META_SK)
    kind = UnicodeAttribute(default="flow")
    name = UnicodeAttribute()
    name_key = UnicodeAttribute()  # casefolded name + "#" + id: sorted and unique
    description = UnicodeAttribute(null=True)
    latest_version = NumberAttribute()
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()

    by_name = FlowsByName()


class FlowVersionRecord(Model):
    Meta = _META

    flow_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)
    version = NumberAttribute()
    author_actor = UnicodeAttribute()
    author_subject = UnicodeAttribute()
    comment = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    document = BinaryAttribute(legacy_encoding=False)  # zlib-compressed JSON


class FlowRunRecord(Model):
    """A run of a flow version: a dry run, or a Runner's run of one trigger event."""

    Meta = _META

    flow_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)  # run#<run id>: ULIDs, so newest last
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
    trace = BinaryAttribute(legacy_encoding=False)  # zlib-compressed JSON


class FlowUseRecord(Model):
    """Marks that a deployment uses the flow: the flow cannot be deleted while one exists."""

    Meta = _META

    flow_id = UnicodeAttribute(hash_key=True)
    sk = UnicodeAttribute(range_key=True)  # use#<deployment id>
    deployment_id = UnicodeAttribute()


# --- flows and versions -------------------------------------------------------------------------


def get(flow_id: str) -> FlowRecord | None:
    try:
        return FlowRecord.get(flow_id, META_SK)
    except FlowRecord.DoesNotExist:
        return None


def get_version(flow_id: str, version: int) -> FlowVersionRecord | None:
    try:
        return FlowVersionRecord.get(flow_id, version_sk(version))
    except FlowVersionRecord.DoesNotExist:
        return None


def name_key(name: str, flow_id: str) -> str:
    return f"{name.casefold()}#{flow_id}"


def create(flow: FlowRecord, first: FlowVersionRecord, audit: AuditRecord) -> None:
    with transaction() as tx:
        tx.save(flow, condition=FlowRecord.flow_id.does_not_exist())
        tx.save(first, condition=FlowVersionRecord.flow_id.does_not_exist())
        tx.save(audit)


def add_version(
    flow: FlowRecord, latest: int, version: FlowVersionRecord, at: datetime, audit: AuditRecord
) -> None:
    """Saves `version` (latest + 1) if nobody saved another since `latest`; else StaleVersion."""
    try:
        with transaction() as tx:
            tx.update(
                flow,
                actions=[
                    FlowRecord.latest_version.set(latest + 1),
                    FlowRecord.updated_at.set(at),
                ],
                condition=(FlowRecord.latest_version == latest),
            )
            tx.save(version, condition=FlowVersionRecord.flow_id.does_not_exist())
            tx.save(audit)
    except TransactWriteError as error:
        if "ConditionalCheckFailed" in cancellation_codes(error):
            if get(flow.flow_id) is None:
                raise FlowGone(flow.flow_id) from None
            raise StaleVersion(flow.flow_id) from None
        raise


def update(
    flow: FlowRecord,
    *,
    name: str | None,
    description: str | None,
    clear_description: bool,
    at: datetime,
    audit: AuditRecord,
) -> None:
    actions: list[Any] = [FlowRecord.updated_at.set(at)]
    if name is not None:
        actions += [
            FlowRecord.name.set(name),
            FlowRecord.name_key.set(name_key(name, flow.flow_id)),
        ]
    if clear_description:
        actions.append(FlowRecord.description.remove())
    elif description is not None:
        actions.append(FlowRecord.description.set(description))
    try:
        with transaction() as tx:
            tx.update(flow, actions=actions, condition=FlowRecord.flow_id.exists())
            tx.save(audit)
    except TransactWriteError as error:
        if "ConditionalCheckFailed" in cancellation_codes(error):
            raise FlowGone(flow.flow_id) from None
        raise


def delete(flow: FlowRecord, audit: AuditRecord) -> None:
    """Deletes the flow with its versions and runs, unless a deployment uses it (FlowInUse).

    The flow's own item goes first, with the audit entry, in one transaction; its versions and
    runs follow in batches (a reader finds the flow gone either way)."""
    users = deployments_using(flow.flow_id)
    if users:
        raise FlowInUse(users)
    try:
        with transaction() as tx:
            tx.delete(flow, condition=FlowRecord.flow_id.exists())
            tx.save(audit)
    except TransactWriteError as error:
        if "ConditionalCheckFailed" in cancellation_codes(error):
            raise FlowGone(flow.flow_id) from None
        raise
    with FlowVersionRecord.batch_write() as batch:
        for item in FlowVersionRecord.query(flow.flow_id, attributes_to_get=["flow_id", "sk"]):
            batch.delete(item)


def list_flows(limit: int, cursor: str | None) -> Page[FlowRecord]:
    def query(**page: Any) -> Any:
        return FlowRecord.by_name.query("flow", **page)

    return read_page(query, {"flow_id", "sk", "kind", "name_key"}, limit, cursor, lambda r: r)


def list_versions(flow_id: str, limit: int, cursor: str | None) -> Page[FlowVersionRecord]:
    def query(**page: Any) -> Any:
        return FlowVersionRecord.query(
            flow_id,
            FlowVersionRecord.sk.startswith("version#"),
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

    return read_page(query, {"flow_id", "sk"}, limit, cursor, lambda r: r)


# --- deployments that use a flow ---------------------------------------------------------------


def deployments_using(flow_id: str) -> list[str]:
    return [
        record.deployment_id
        for record in FlowUseRecord.query(flow_id, FlowUseRecord.sk.startswith("use#"), limit=20)
    ]


def mark_used(flow_id: str, deployment_id: str) -> FlowUseRecord:
    """The item a deployment writes (in its own transaction) while it uses the flow."""
    return FlowUseRecord(flow_id=flow_id, sk=f"use#{deployment_id}", deployment_id=deployment_id)


# --- runs ----------------------------------------------------------------------------------------


def run_sk(run_id: str) -> str:
    return f"run#{run_id}"


def save_run(run: FlowRunRecord) -> bool:
    """False when the run was recorded already (a Runner that reports it again after a retry)."""
    try:
        run.save(condition=FlowRunRecord.sk.does_not_exist())
    except PutError as error:
        if error.cause_response_code == "ConditionalCheckFailedException":
            return False
        raise
    return True


def get_run(flow_id: str, run_id: str) -> FlowRunRecord | None:
    try:
        return FlowRunRecord.get(flow_id, run_sk(run_id))
    except FlowRunRecord.DoesNotExist:
        return None


def trace_blob(trace: Any) -> bytes:
    blob = pack(trace)
    if len(blob) > MAX_TRACE_BYTES:
        blob = pack({"truncated": True, "bytes": len(blob)})
    return blob


def list_runs(
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
        (FlowRunRecord.deployment_id, deployment_id),
        (FlowRunRecord.runner_id, runner_id),
        (FlowRunRecord.outcome, outcome),
    ):
        if value is not None:
            term = attribute == value
            condition = term if condition is None else condition & term

    def query(**page: Any) -> Any:
        return FlowRunRecord.query(
            flow_id,
            FlowRunRecord.sk.startswith("run#"),
            filter_condition=condition,
            scan_index_forward=False,
            **page,
        )

    return read_page(query, {"flow_id", "sk"}, limit, cursor, lambda r: r)
