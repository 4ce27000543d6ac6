"""Deployments: flow versions rolled out to Runner groups in stages.

Items (pk, sk):
- (dep_…, "meta"): a deployment — flow version, stages, printers, context, status; `rev` guards
  every change (a stale writer is refused, never merged).
- (dep_…, "runner#run_…"): what one Runner reported for the deployment.
- (rgp_…, "dep#dep_…"): the deployment targets the group (listRunnerGroupDeployments).
- (rgp_…, "flow#flw_…"): the version of a flow the group's Runners are to run, with the one it
  replaced (what a rollback puts back).
- ("flow#flw_…", "deployed#N"): version N of the flow was rolled out once (the policy asks a
  person for a first deployment only).
- (prn_…, "dep#dep_…"): the deployment assigns the printer to one of its aliases (a printer in
  use is not deleted).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import PutError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store import flows, printers
from etikett.store.base import Item, condition_failed, get_item, item_of, record_of, table_meta
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

META = table_meta("deployments_table")  # the table, for the modules of its other items
META_SK = "meta"
KIND = "deployment"
# The statuses a deployment never leaves: it runs nowhere and assigns nothing any more.
ENDED = ("rolled_back", "superseded")


class DeploymentRecord(NamedTuple):
    id: str  # dep_…
    flow_id: str
    version: int
    status: str
    stages: list[dict[str, Any]]  # [{index, group_ids, status, approved_by?, approved_at?}]
    printers: dict[str, Any]  # alias -> {printer_id, by_runner}
    context: dict[str, Any]  # name -> {value, updated_at, updated_by}
    author_actor: str
    author_subject: str
    created_at: dt.datetime
    updated_at: dt.datetime
    rev: int
    offline: dict[str, Any] | None = None  # the offline policy; None: off (made before it)


class RunnerStateRecord(NamedTuple):
    """What one Runner reported for a deployment."""

    deployment_id: str
    runner_id: str
    group_id: str
    status: str  # pending | applying | active | failed
    detail: str | None
    updated_at: dt.datetime


class GroupFlowRecord(NamedTuple):
    """The version of one flow a group runs (or is rolling out), and the one it replaced."""

    group_id: str
    flow_id: str
    deployment_id: str
    version: int
    previous_deployment_id: str | None
    previous_version: int | None
    since: dt.datetime


class _ByKind(GlobalSecondaryIndex["_DeploymentItem"]):
    class Meta:
        index_name = "by_kind"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True, attr_name="pk")


class _DeploymentItem(Item):
    Meta = META
    id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True, default=META_SK)
    kind = UnicodeAttribute(default=KIND)
    flow_id = UnicodeAttribute()
    version = NumberAttribute()
    status = UnicodeAttribute()
    stages = JSONAttribute()
    printers = JSONAttribute(default=dict)
    context = JSONAttribute(default=dict)
    offline = JSONAttribute(null=True)
    author_actor = UnicodeAttribute()
    author_subject = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()
    rev = NumberAttribute(default=0)
    by_kind = _ByKind()


class _RunnerStateItem(Item):
    Meta = META
    deployment_id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True)  # runner#run_…
    runner_id = UnicodeAttribute()
    group_id = UnicodeAttribute()
    status = UnicodeAttribute()
    detail = UnicodeAttribute(null=True)
    updated_at = UTCDateTimeAttribute()


class _GroupDeploymentItem(Item):
    Meta = META
    group_id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True)  # dep#dep_…
    deployment_id = UnicodeAttribute()
    flow_id = UnicodeAttribute()


class _GroupFlowItem(Item):
    Meta = META
    group_id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True)  # flow#flw_…
    flow_id = UnicodeAttribute()
    deployment_id = UnicodeAttribute()
    version = NumberAttribute()
    previous_deployment_id = UnicodeAttribute(null=True)
    previous_version = NumberAttribute(null=True)
    since = UTCDateTimeAttribute()


class _DeployedVersionItem(Item):
    Meta = META
    key = UnicodeAttribute(hash_key=True, attr_name="pk")  # flow#flw_…
    sk = UnicodeAttribute(range_key=True)  # deployed#N
    deployment_id = UnicodeAttribute()


class _PrinterUseItem(Item):
    Meta = META
    printer_id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True)  # dep#dep_…
    deployment_id = UnicodeAttribute()


def _deployment(item: _DeploymentItem) -> DeploymentRecord:
    return record_of(DeploymentRecord, item)


def _group_flow(item: _GroupFlowItem) -> GroupFlowRecord:
    return record_of(GroupFlowRecord, item)


# --- reading --------------------------------------------------------------------------------------


def get(deployment_id: str) -> DeploymentRecord | None:
    item = get_item(_DeploymentItem, deployment_id, META_SK)
    return _deployment(item) if item is not None else None


def runner_states(deployment_id: str) -> list[RunnerStateRecord]:
    items = _RunnerStateItem.query(deployment_id, _RunnerStateItem.sk.startswith("runner#"))
    return [record_of(RunnerStateRecord, item) for item in items]


def runner_state(deployment_id: str, runner_id: str) -> RunnerStateRecord | None:
    item = get_item(_RunnerStateItem, deployment_id, f"runner#{runner_id}")
    return record_of(RunnerStateRecord, item) if item is not None else None


def page(
    *, flow_id: str | None, status: str | None, limit: int, cursor: str | None
) -> Page[DeploymentRecord]:
    """Newest first; `flow_id` and `status` filter when given."""
    condition = None
    for attribute, value in (
        (_DeploymentItem.flow_id, flow_id),
        (_DeploymentItem.status, status),
    ):
        if value is not None:
            term = attribute == value
            condition = term if condition is None else condition & term

    def query(**page: Any) -> Any:
        return _DeploymentItem.by_kind.query(
            KIND, filter_condition=condition, scan_index_forward=False, **page
        )

    return read_page(query, {"pk", "sk", "kind"}, limit, cursor, _deployment)


def page_group_deployment_ids(group_id: str, limit: int, cursor: str | None) -> Page[str]:
    """The deployments that target a group, newest first."""

    def query(**page: Any) -> Any:
        return _GroupDeploymentItem.query(
            group_id, _GroupDeploymentItem.sk.startswith("dep#"), scan_index_forward=False, **page
        )

    return read_page(query, {"pk", "sk"}, limit, cursor, lambda item: str(item.deployment_id))


def group_flows(group_id: str) -> list[GroupFlowRecord]:
    items = _GroupFlowItem.query(group_id, _GroupFlowItem.sk.startswith("flow#"))
    return [_group_flow(item) for item in items]


def group_flow(group_id: str, flow_id: str) -> GroupFlowRecord | None:
    item = get_item(_GroupFlowItem, group_id, f"flow#{flow_id}")
    return _group_flow(item) if item is not None else None


def deployments_assigning(printer_id: str) -> list[str]:
    """The deployments that assign the printer to an alias (whatever their status)."""
    items = _PrinterUseItem.query(printer_id, _PrinterUseItem.sk.startswith("dep#"))
    return [str(item.deployment_id) for item in items]


def live_assigning(printer_id: str) -> list[str]:
    """The deployments, neither rolled back nor superseded, that assign the printer now (a
    printer they assign is not deleted)."""
    live = []
    for deployment_id in deployments_assigning(printer_id):
        record = get(deployment_id)
        if (
            record is not None
            and record.status not in ENDED
            and printer_id in printer_ids(record.printers)
        ):
            live.append(deployment_id)
    return live


def printer_ids(printers: dict[str, Any]) -> set[str]:
    """Every printer a deployment's aliases name, overrides per Runner included."""
    found: set[str] = set()
    for entry in printers.values():
        found.add(str(entry["printer_id"]))
        found.update(str(p) for p in (entry.get("by_runner") or {}).values())
    return found


def reassign_printers(
    uow: UnitOfWork, deployment_id: str, before: dict[str, Any], after: dict[str, Any]
) -> None:
    """Keep the printer index in line with a change of the deployment's aliases; each newly
    assigned printer must still exist (`printer.exists`) and counts the assignment."""

    old, new = printer_ids(before), printer_ids(after)
    for printer_id in sorted(new - old):
        uow.put(
            _PrinterUseItem(
                printer_id=printer_id, sk=f"dep#{deployment_id}", deployment_id=deployment_id
            )
        )
        printers.note_assigned(uow, printer_id)
    for printer_id in sorted(old - new):
        uow.delete(_PrinterUseItem(printer_id, f"dep#{deployment_id}"))


def was_deployed(flow_id: str, version: int) -> bool:
    return get_item(_DeployedVersionItem, f"flow#{flow_id}", f"deployed#{version}") is not None


def deployed_versions(flow_id: str) -> set[int]:
    """The versions of the flow that were rolled out once."""
    items = _DeployedVersionItem.query(
        f"flow#{flow_id}", _DeployedVersionItem.sk.startswith("deployed#")
    )
    return {int(str(item.sk).removeprefix("deployed#")) for item in items}


# --- writing --------------------------------------------------------------------------------------


def add(uow: UnitOfWork, deployment: DeploymentRecord) -> None:
    """The deployment, its group index items, and the mark that it uses its flow."""
    item = item_of(_DeploymentItem, deployment, sk=META_SK, kind=KIND)
    uow.put(item, _DeploymentItem.id.does_not_exist(), name=ConditionName.DEPLOYMENT_ABSENT)
    for stage in deployment.stages:
        for group_id in stage["group_ids"]:
            uow.put(
                _GroupDeploymentItem(
                    group_id=group_id,
                    sk=f"dep#{deployment.id}",
                    deployment_id=deployment.id,
                    flow_id=deployment.flow_id,
                )
            )
    flows.mark_used(uow, deployment.flow_id, deployment.id)


def save(uow: UnitOfWork, before: DeploymentRecord, after: DeploymentRecord) -> DeploymentRecord:
    """`after`'s state replaces `before`'s, unless the deployment changed since it was read
    (`deployment.unchanged` fails). Answers the record as it is once this commits."""
    saved = after._replace(rev=before.rev + 1)
    uow.update(
        _DeploymentItem(before.id, META_SK),
        [
            _DeploymentItem.status.set(saved.status),
            _DeploymentItem.stages.set(saved.stages),
            _DeploymentItem.printers.set(saved.printers),
            _DeploymentItem.context.set(saved.context),
            _DeploymentItem.offline.set(saved.offline),
            _DeploymentItem.updated_at.set(saved.updated_at),
            _DeploymentItem.rev.set(saved.rev),
        ],
        _DeploymentItem.rev == before.rev,
        name=ConditionName.DEPLOYMENT_UNCHANGED,
    )
    return saved


def set_group_flow(uow: UnitOfWork, target: GroupFlowRecord) -> None:
    uow.put(item_of(_GroupFlowItem, target, sk=f"flow#{target.flow_id}"))


def remove_group_flow(uow: UnitOfWork, target: GroupFlowRecord) -> None:
    uow.delete(_GroupFlowItem(target.group_id, f"flow#{target.flow_id}"))


def put_runner_state(uow: UnitOfWork, state: RunnerStateRecord) -> None:
    uow.put(item_of(_RunnerStateItem, state, sk=f"runner#{state.runner_id}"))


def add_runner_state(state: RunnerStateRecord) -> None:
    """A Runner's first state on its own, unless it reported already (its report stands)."""
    item = item_of(_RunnerStateItem, state, sk=f"runner#{state.runner_id}")
    try:
        item.save(condition=_RunnerStateItem.sk.does_not_exist())
    except PutError as error:
        if not condition_failed(error):
            raise


def report_runner(state: RunnerStateRecord) -> None:
    """A Runner's report, on its own (nothing else changes with it)."""
    item_of(_RunnerStateItem, state, sk=f"runner#{state.runner_id}").save()


def mark_deployed(uow: UnitOfWork, deployment: DeploymentRecord) -> None:
    """The deployment's flow version has been rolled out once."""
    uow.put(
        _DeployedVersionItem(
            key=f"flow#{deployment.flow_id}",
            sk=f"deployed#{deployment.version}",
            deployment_id=deployment.id,
        )
    )


def pass_flow(
    uow: UnitOfWork, deployment: DeploymentRecord, revived: list[DeploymentRecord]
) -> None:
    """The deployment no longer uses its flow; those a rollback brought back use it again."""
    flows.change_claims(
        uow, deployment.flow_id, added=[d.id for d in revived], removed=[deployment.id]
    )


def release_flow(uow: UnitOfWork, deployment: DeploymentRecord) -> None:
    """The deployment no longer uses its flow (the flow may be deleted once none does)."""
    flows.unmark_used(uow, deployment.flow_id, deployment.id)
