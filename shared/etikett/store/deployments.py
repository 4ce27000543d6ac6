"""The deployments table and its repository.

Items (pk, sk):
- (dep_…, "meta"): a deployment — flow version, stages, printers, context, status; `rev` guards
  every change (a stale writer is refused, never merged).
- (dep_…, "runner#run_…"): what one Runner reported for the deployment.
- (rgp_…, "dep#dep_…"): the deployment targets the group (listRunnerGroupDeployments).
- (rgp_…, "flow#flw_…"): the version of a flow the group's Runners are to run, with the one it
  replaced (what a rollback puts back).
- ("flow#flw_…", "deployed#N"): version N of the flow was rolled out once (the policy asks a
  person for a first deployment only).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import TransactWriteError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.audit import AuditRecord
from etikett.store.base import cancellation_codes, table_meta, transaction
from etikett.store.flows import FlowUseRecord
from etikett.store.pages import Page, read_page

_META = table_meta("deployments_table")
META_SK = "meta"


class StaleDeployment(Exception):
    """Another change to the deployment got there first."""


class ByKind(GlobalSecondaryIndex["DeploymentRecord"]):
    class Meta:
        index_name = "by_kind"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    pk = UnicodeAttribute(range_key=True)


class DeploymentRecord(Model):
    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # dep_…
    sk = UnicodeAttribute(range_key=True, default=META_SK)
    kind = UnicodeAttribute(default="deployment")
    flow_id = UnicodeAttribute()
    version = NumberAttribute()
    status = UnicodeAttribute()
    stages = JSONAttribute()  # [{index, group_ids, status, approved_by?, approved_at?}]
    printers = JSONAttribute(default=dict)  # alias -> {printer_id, by_runner}
    context = JSONAttribute(default=dict)  # name -> {value, updated_at, updated_by}
    author_actor = UnicodeAttribute()
    author_subject = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
    updated_at = UTCDateTimeAttribute()
    rev = NumberAttribute(default=0)

    by_kind = ByKind()


class RunnerStateRecord(Model):
    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # dep_…
    sk = UnicodeAttribute(range_key=True)  # runner#run_…
    runner_id = UnicodeAttribute()
    group_id = UnicodeAttribute()
    status = UnicodeAttribute()  # pending | applying | active | failed
    detail = UnicodeAttribute(null=True)
    updated_at = UTCDateTimeAttribute()


class GroupDeploymentRecord(Model):
    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # rgp_…
    sk = UnicodeAttribute(range_key=True)  # dep#dep_…
    deployment_id = UnicodeAttribute()
    flow_id = UnicodeAttribute()


class GroupFlowRecord(Model):
    """The version of one flow a group runs (or is rolling out), and the one it replaced."""

    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # rgp_…
    sk = UnicodeAttribute(range_key=True)  # flow#flw_…
    flow_id = UnicodeAttribute()
    deployment_id = UnicodeAttribute()
    version = NumberAttribute()
    previous_deployment_id = UnicodeAttribute(null=True)
    previous_version = NumberAttribute(null=True)
    since = UTCDateTimeAttribute()


class DeployedVersionRecord(Model):
    Meta = _META

    pk = UnicodeAttribute(hash_key=True)  # flow#flw_…
    sk = UnicodeAttribute(range_key=True)  # deployed#N
    deployment_id = UnicodeAttribute()


def runner_sk(runner_id: str) -> str:
    return f"runner#{runner_id}"


# --- reads -----------------------------------------------------------------------------------


def get(deployment_id: str) -> DeploymentRecord | None:
    try:
        return DeploymentRecord.get(deployment_id, META_SK)
    except DeploymentRecord.DoesNotExist:
        return None


def runner_states(deployment_id: str) -> list[RunnerStateRecord]:
    return list(RunnerStateRecord.query(deployment_id, RunnerStateRecord.sk.startswith("runner#")))


def list_deployments(
    *, flow_id: str | None, status: str | None, limit: int, cursor: str | None
) -> Page[DeploymentRecord]:
    condition = None
    for attribute, value in (
        (DeploymentRecord.flow_id, flow_id),
        (DeploymentRecord.status, status),
    ):
        if value is not None:
            term = attribute == value
            condition = term if condition is None else condition & term

    def query(**page: Any) -> Any:
        return DeploymentRecord.by_kind.query(
            "deployment", filter_condition=condition, scan_index_forward=False, **page
        )

    return read_page(query, {"pk", "sk", "kind"}, limit, cursor, lambda r: r)


def group_deployment_ids(group_id: str, limit: int, cursor: str | None) -> Page[str]:
    def query(**page: Any) -> Any:
        return GroupDeploymentRecord.query(
            group_id,
            GroupDeploymentRecord.sk.startswith("dep#"),
            scan_index_forward=False,
            **page,
        )

    return read_page(query, {"pk", "sk"}, limit, cursor, lambda r: r.deployment_id)


def group_flows(group_id: str) -> list[GroupFlowRecord]:
    return list(GroupFlowRecord.query(group_id, GroupFlowRecord.sk.startswith("flow#")))


def group_flow(group_id: str, flow_id: str) -> GroupFlowRecord | None:
    try:
        return GroupFlowRecord.get(group_id, f"flow#{flow_id}")
    except GroupFlowRecord.DoesNotExist:
        return None


def was_deployed(flow_id: str, version: int) -> bool:
    try:
        DeployedVersionRecord.get(f"flow#{flow_id}", f"deployed#{version}")
    except DeployedVersionRecord.DoesNotExist:
        return False
    return True


# --- writes ----------------------------------------------------------------------------------


def create(deployment: DeploymentRecord, audit: AuditRecord) -> None:
    """The deployment, its group index items, and the mark that it uses its flow."""
    with transaction() as tx:
        tx.save(deployment, condition=DeploymentRecord.pk.does_not_exist())
        for stage in deployment.stages:
            for group_id in stage["group_ids"]:
                tx.save(
                    GroupDeploymentRecord(
                        pk=group_id,
                        sk=f"dep#{deployment.pk}",
                        deployment_id=deployment.pk,
                        flow_id=deployment.flow_id,
                    )
                )
        tx.save(
            FlowUseRecord(
                flow_id=deployment.flow_id,
                sk=f"use#{deployment.pk}",
                deployment_id=deployment.pk,
            )
        )
        tx.save(audit)


def save(
    deployment: DeploymentRecord,
    at: datetime,
    audit: AuditRecord | None = None,
    *,
    group_flows: Sequence[GroupFlowRecord] = (),
    removed_group_flows: Sequence[GroupFlowRecord] = (),
    runner_states: Sequence[RunnerStateRecord] = (),
    deployed_version: bool = False,
    release_flow: bool = False,
) -> None:
    """Writes the deployment's changed state (if nobody changed it since it was read) with the
    group targets and Runner states the change implies, in one transaction."""
    rev = int(deployment.rev)
    try:
        with transaction() as tx:
            tx.update(
                deployment,
                actions=[
                    DeploymentRecord.status.set(deployment.status),
                    DeploymentRecord.stages.set(deployment.stages),
                    DeploymentRecord.printers.set(deployment.printers),
                    DeploymentRecord.context.set(deployment.context),
                    DeploymentRecord.updated_at.set(at),
                    DeploymentRecord.rev.set(rev + 1),
                ],
                condition=DeploymentRecord.rev == rev,
            )
            for item in group_flows:
                tx.save(item)
            for item in removed_group_flows:
                tx.delete(item)
            for item in runner_states:
                tx.save(item)
            if deployed_version:
                tx.save(
                    DeployedVersionRecord(
                        pk=f"flow#{deployment.flow_id}",
                        sk=f"deployed#{int(deployment.version)}",
                        deployment_id=deployment.pk,
                    )
                )
            if release_flow:
                tx.delete(FlowUseRecord(flow_id=deployment.flow_id, sk=f"use#{deployment.pk}"))
            if audit is not None:
                tx.save(audit)
    except TransactWriteError as error:
        if "ConditionalCheckFailed" in cancellation_codes(error):
            raise StaleDeployment(deployment.pk) from None
        raise
    deployment.rev = rev + 1


def report_runner(state: RunnerStateRecord) -> None:
    state.save()
