"""A deployment's stages rolled out: approved one by one, advanced as Runners report, older
deployments of the same groups superseded, rolled back to what ran before.
"""

from __future__ import annotations

import copy
from typing import Any

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.deployments import changes
from etikett.domain.deployments.models import (
    APPROVED,
    Approval,
    Deployment,
    Rollback,
)
from etikett.domain.deployments.records import load, saving
from etikett.domain.deployments.runner_reports import RunnerReport
from etikett.domain.deployments.views import get
from etikett.domain.runners import runner_notices, runner_records
from etikett.domain.users import policies
from etikett.store import audit as audit_log
from etikett.store import deployments as store
from etikett.store.deployments import (
    ENDED,
    DeploymentRecord,
    GroupFlowRecord,
    RunnerStateRecord,
)
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import MAX_WRITES, ConditionFailed, UnitOfWork
from etikett_engine.errors import Conflict, HumanRequired, ProblemCode


def approve(invocation: Invocation, deployment_id: str, request: Approval) -> Deployment:

    caller = invocation.caller
    assert caller is not None
    if caller.actor != "human" and policies.enabled(policies.AI_APPROVAL):
        raise HumanRequired(
            f"While {policies.AI_APPROVAL} is on, a person approves each stage.",
            deployment_id=deployment_id,
            policy=policies.AI_APPROVAL,
        )
    record = load(deployment_id)
    stages = record.stages
    if (
        0 <= request.stage < len(stages)
        and record.status not in ENDED
        and (
            stages[request.stage].get(changes.HELD)
            or changes.changed_since_approval(record, stages[request.stage])
        )
    ):
        # An approved stage whose context or printers changed since: approve what it runs now.
        changes.reapprove(invocation, record, request.stage, request.comment)
        return get(deployment_id)
    if not 0 <= request.stage < len(stages) or stages[request.stage]["status"] != (
        "awaiting_approval"
    ):
        raise Conflict(
            f"Stage {request.stage} of {deployment_id} is not awaiting approval.",
            ProblemCode.DEPLOYMENT_STAGE_NOT_AWAITING,
            deployment_id=deployment_id,
            stage=request.stage,
            status=stages[request.stage]["status"] if 0 <= request.stage < len(stages) else None,
        )
    now = clock.now()
    new_stages = copy.deepcopy(stages)
    stage = new_stages[request.stage]
    stage.update(
        status="rolling_out",
        approved_by=caller.subject,
        approved_at=clock.rfc3339(now),
        **{changes.DIGEST: changes.current(record)},
    )
    after = record._replace(stages=new_stages, status="rolling_out", updated_at=now)
    targets = []
    for group_id in stage["group_ids"]:
        current = store.group_flow(group_id, record.flow_id)
        previous = current
        if current is not None and current.deployment_id == record.id:
            previous = None
        targets.append(
            GroupFlowRecord(
                group_id=group_id,
                flow_id=record.flow_id,
                deployment_id=record.id,
                version=record.version,
                previous_deployment_id=previous.deployment_id if previous else None,
                previous_version=previous.version if previous else None,
                since=now,
            )
        )
    states = [
        RunnerStateRecord(
            deployment_id=record.id,
            runner_id=runner.id,
            group_id=group_id,
            status="pending",
            detail=None if runner_records.status_of(runner, now) == "online" else "offline",
            updated_at=now,
        )
        for group_id in stage["group_ids"]
        for runner in _runners_of(group_id)
    ]
    details = {"stage": request.stage, "comment": request.comment}
    # The Runners' first states that do not fit the transaction follow it, each unless its
    # Runner reported already (a large stage has more Runners than one transaction takes).
    room = MAX_WRITES - 3 - len(targets)
    with saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)
        for target in targets:
            store.set_group_flow(uow, target)
        for state in states[:room]:
            store.put_runner_state(uow, state)
        store.mark_deployed(uow, record)
    for state in states[room:]:
        store.add_runner_state(state)
    runner_notices.groups_changed(stage["group_ids"])  # the stage's Runners start it now
    advance(deployment_id)
    return get(deployment_id)


def _runners_of(group_id: str) -> list[RunnerRecord]:

    return [r for r in runner_records.members(group_id) if r.state == "active"]


def advance(deployment_id: str) -> None:
    """Moves the rolling-out stage on from what its Runners reported: failed when one failed,
    active when every online Runner runs the version (the next stage then awaits approval). A
    failed stage rolls out again once no Runner reports a failure (it tried again)."""

    for _ in range(5):
        record = load(deployment_id)
        index = next(
            (s["index"] for s in record.stages if s["status"] in ("rolling_out", "failed")), None
        )
        if index is None or record.status in ENDED:
            return
        stages = copy.deepcopy(record.stages)
        stage = stages[index]
        states = {s.runner_id: s for s in store.runner_states(deployment_id)}
        now = clock.now()
        members = [r for g in stage["group_ids"] for r in _runners_of(g)]
        reported = [states.get(r.id) for r in members]
        if any(s is not None and s.status == "failed" for s in reported):
            if stage["status"] == "failed":
                return
            stage["status"], status = "failed", "failed"
        else:
            online = [
                states.get(r.id) for r in members if runner_records.status_of(r, now) == "online"
            ]
            active = [s for s in reported if s is not None and s.status == "active"]
            waiting = not all(s is not None and s.status == "active" for s in online) or bool(
                members and not active  # nobody runs it yet (all offline): wait for one
            )
            if waiting and stage["status"] == "rolling_out":
                return
            if waiting:  # the Runner that failed tries again: no failure stands now
                stage["status"], status = "rolling_out", "rolling_out"
            else:
                stage["status"] = "active"
                if index + 1 < len(stages):
                    stages[index + 1]["status"] = "awaiting_approval"
                    status = "awaiting_approval"
                else:
                    status = "active"
        after = record._replace(stages=stages, status=status, updated_at=now)
        details = {
            "stage": index,
            "stage_status": stage["status"],
            "before": record.stages[index]["status"],
            "status": status,
        }
        try:
            with UnitOfWork(audit.system("advanceDeployment", deployment_id, details)) as uow:
                saved = store.save(uow, record, after)
        except ConditionFailed:
            continue
        if stage["status"] == "active":
            _supersede_older(saved, stage["group_ids"])
        return


def _supersede_older(record: DeploymentRecord, group_ids: list[str]) -> None:
    """An older deployment of the flow is superseded once no group runs it any more."""
    older = {
        target.previous_deployment_id
        for g in group_ids
        if (target := store.group_flow(g, record.flow_id)) is not None
        and target.deployment_id == record.id
        and target.previous_deployment_id
    }
    for deployment_id in older:
        old = store.get(deployment_id)
        if old is None or old.status in ENDED:
            continue
        groups = [g for s in old.stages for g in s["group_ids"]]
        still = [
            g
            for g in groups
            if (t := store.group_flow(g, old.flow_id)) is not None and t.deployment_id == old.id
        ]
        if still:
            continue
        superseded = old._replace(status="superseded", updated_at=clock.now())
        details = {"by": record.id, "flow_id": old.flow_id, "version": record.version}
        try:
            with UnitOfWork(audit.system("supersedeDeployment", old.id, details)) as uow:
                store.save(uow, old, superseded)
                store.release_flow(uow, old)
        except ConditionFailed:
            continue


def rollback(invocation: Invocation, deployment_id: str, request: Rollback) -> Deployment:
    record = load(deployment_id)
    if record.status in ENDED:
        raise Conflict(
            f"{deployment_id} is {record.status} already.",
            ProblemCode.DEPLOYMENT_ENDED,
            deployment_id=deployment_id,
            status=record.status,
        )
    now = clock.now()
    restored: list[GroupFlowRecord] = []
    removed: list[GroupFlowRecord] = []
    previous: dict[str, DeploymentRecord | None] = {}
    stages = copy.deepcopy(record.stages)
    for stage in stages:
        if stage["status"] in APPROVED:
            for group_id in stage["group_ids"]:
                target = store.group_flow(group_id, record.flow_id)
                if target is None or target.deployment_id != record.id:
                    continue  # a newer deployment runs there now
                back = target.previous_deployment_id
                if back and back not in previous:
                    previous[back] = store.get(back)
                # A deployment rolled back meanwhile is not brought back: the group stops.
                before = previous.get(back) if back else None
                if before is not None and before.status != "rolled_back":
                    restored.append(
                        GroupFlowRecord(
                            group_id=group_id,
                            flow_id=record.flow_id,
                            deployment_id=before.id,
                            version=before.version,
                            previous_deployment_id=None,
                            previous_version=None,
                            since=now,
                        )
                    )
                else:
                    removed.append(target)
        stage["status"] = "rolled_back" if stage["status"] != "pending" else "pending"
    after = record._replace(stages=stages, status="rolled_back", updated_at=now)
    # A superseded deployment brought back runs again: it says so and uses its flow again (one
    # still live never stopped using it), so that it, too, can be rolled back.
    revived: dict[str, DeploymentRecord] = {}
    for target in restored:
        back_record = previous[target.deployment_id]
        if back_record is not None and back_record.status == "superseded":
            revived[back_record.id] = back_record
    details = {
        "comment": request.comment,
        "restored": {t.group_id: f"{t.deployment_id}@{t.version}" for t in restored},
        "stopped": [t.group_id for t in removed],
        "reactivated": sorted(revived),
    }
    with saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)
        for target in restored:
            store.set_group_flow(uow, target)
        for target in removed:
            store.remove_group_flow(uow, target)
        # One change of the flow's claims: a transaction may write the flow's item only once.
        store.pass_flow(uow, record, list(revived.values()))
        for old in revived.values():
            store.save(uow, old, old._replace(status="active", updated_at=now))
            groups = sorted(t.group_id for t in restored if t.deployment_id == old.id)
            revival = {"by_rollback_of": deployment_id, "groups": groups}
            audit_log.add(uow, audit.system("reactivateDeployment", old.id, revival))
    runner_notices.groups_changed([t.group_id for t in [*restored, *removed]])
    return get(deployment_id)


def report(
    runner: Any, deployment_id: str, request: RunnerReport, invocation: Invocation | None = None
) -> None:
    """A Runner's progress with a deployment it was given; audited (the Runner as actor) when
    its status or reason changed."""
    record = load(deployment_id)
    state = RunnerStateRecord(
        deployment_id=record.id,
        runner_id=runner.id,
        group_id=runner.group_id,
        status=request.status,
        detail=request.detail,
        updated_at=clock.now(),
    )
    before = store.runner_state(deployment_id, runner.id)
    if invocation is None or (
        before is not None and (before.status, before.detail) == (state.status, state.detail)
    ):
        store.report_runner(state)
    else:
        details = {"runner_id": runner.id, "status": state.status, "detail": state.detail}
        with UnitOfWork(audit.record(invocation, deployment_id, details=details)) as uow:
            store.put_runner_state(uow, state)
    advance(deployment_id)
