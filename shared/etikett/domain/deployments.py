"""Deployments: a flow version rolled out to Runner groups in stages, each approved before it
starts, rolled back to what ran before. Runners report per deployment; a stage is active once
every online Runner of its groups runs the version, and the next stage then awaits approval.

While `aiFreigabePflicht` is on, a person must deploy a flow version that never ran anywhere and
must approve each stage; rolling back (to versions that ran before) is open to agents too."""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Literal

from pydantic import BaseModel, Field

from etikett import clock
from etikett.domain import audit, flows, policies
from etikett.domain.actors import Invocation
from etikett.dsl.label import IDENTIFIER
from etikett.errors import Conflict, HumanRequired, InvalidRequest, NotFound, ProblemCode
from etikett.ids import new_id
from etikett.store import deployments as store
from etikett.store.audit import AuditRecord
from etikett.store.deployments import DeploymentRecord, GroupFlowRecord, RunnerStateRecord
from etikett.store.pages import Page
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import ConditionFailed, UnitOfWork

DeploymentStatus = Literal[
    "awaiting_approval", "rolling_out", "active", "failed", "rolled_back", "superseded"
]
StageStatus = Literal[
    "pending", "awaiting_approval", "rolling_out", "active", "failed", "rolled_back"
]
RunnerStatus = Literal["pending", "applying", "active", "failed"]
_ENDED = ("rolled_back", "superseded")
_APPROVED = ("rolling_out", "active", "failed")


class StageIn(BaseModel):
    model_config = {"extra": "forbid"}
    group_ids: list[str] = Field(min_length=1, max_length=20, description="Runner groups (rgp_…).")


class NewDeployment(BaseModel):
    model_config = {"extra": "forbid"}
    flow_id: str
    version: int = Field(ge=1)
    stages: list[StageIn] = Field(
        min_length=1,
        max_length=10,
        description="Rolled out in order; each stage waits for its own approval.",
        examples=[[{"group_ids": ["rgp_01J8Z7Q4X9V3M2N5P6R7S8T9U0"]}]],
    )
    printers: dict[str, str] = Field(
        default_factory=dict,
        max_length=50,
        description="Printer alias (as the flow's action.print names it) → printer id.",
    )
    context: dict[str, Any] = Field(
        default_factory=dict, max_length=100, description="Deployment-level context parameters."
    )


class RunnerState(BaseModel):
    runner_id: str
    status: RunnerStatus
    detail: str | None = None


class Stage(BaseModel):
    index: int
    group_ids: list[str]
    status: StageStatus
    approved_by: str | None = None
    approved_at: str | None = None
    runners: list[RunnerState]


class Author(BaseModel):
    actor: Literal["human", "service"]
    subject: str


class Deployment(BaseModel):
    id: str
    flow_id: str
    version: int
    status: DeploymentStatus
    stages: list[Stage]
    author: Author
    created_at: str
    updated_at: str


class Approval(BaseModel):
    model_config = {"extra": "forbid"}
    stage: int = Field(ge=0, description="The index of the stage awaiting approval.")
    comment: str | None = Field(default=None, max_length=1000)


class Rollback(BaseModel):
    model_config = {"extra": "forbid"}
    comment: str | None = Field(default=None, max_length=1000)


class PrinterAssignment(BaseModel):
    model_config = {"extra": "forbid"}
    printer_id: str = Field(description="The printer this alias prints to.")
    by_runner: dict[str, str] = Field(
        default_factory=dict,
        max_length=200,
        description="Runner id → printer id, for Runners that print to another printer.",
    )


class AssignedPrinter(PrinterAssignment):
    alias: str


class RunnerReport(BaseModel):
    model_config = {"extra": "forbid"}
    status: Literal["applying", "active", "failed"]
    detail: str | None = Field(default=None, max_length=2000)


# --- reading ---------------------------------------------------------------------------------


def load(deployment_id: str) -> DeploymentRecord:
    record = store.get(deployment_id)
    if record is None:
        raise NotFound(
            f"No deployment {deployment_id}.",
            ProblemCode.DEPLOYMENT_NOT_FOUND,
            deployment_id=deployment_id,
        )
    return record


def view(record: DeploymentRecord, states: list[RunnerStateRecord]) -> Deployment:
    offline = _offline(states)
    by_group: dict[str, list[RunnerState]] = {}
    for state in states:
        by_group.setdefault(state.group_id, []).append(
            RunnerState(
                runner_id=state.runner_id,
                status=state.status,
                detail=offline.get(state.runner_id, state.detail),
            )
        )
    return Deployment(
        id=record.id,
        flow_id=record.flow_id,
        version=record.version,
        status=record.status,
        stages=[
            Stage(
                index=stage["index"],
                group_ids=stage["group_ids"],
                status=stage["status"],
                approved_by=stage.get("approved_by"),
                approved_at=stage.get("approved_at"),
                runners=[r for g in stage["group_ids"] for r in by_group.get(g, [])],
            )
            for stage in record.stages
        ],
        author=Author(actor=record.author_actor, subject=record.author_subject),
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
    )


def _offline(states: list[RunnerStateRecord]) -> dict[str, str]:
    """Runner id → why it has not applied the version yet, for those offline now."""
    from etikett.domain import runners
    from etikett.store import runners as runner_store

    waiting = [s.runner_id for s in states if s.status in ("pending", "applying")]
    now = clock.now()
    answer = {}
    for runner in runner_store.get_runners(waiting):
        if runners.status_of(runner, now) != "online":
            seen = runner.last_seen_at
            answer[runner.id] = (
                f"offline since {clock.rfc3339(seen)}" if seen else "offline (never seen)"
            )
    return answer


def get(deployment_id: str) -> Deployment:
    record = load(deployment_id)
    return view(record, store.runner_states(deployment_id))


def list_deployments(
    flow_id: str | None, status: str | None, limit: int, cursor: str | None
) -> Page[Deployment]:
    page = store.page(flow_id=flow_id, status=status, limit=limit, cursor=cursor)
    return Page(
        items=[view(r, store.runner_states(r.id)) for r in page.items],
        next_cursor=page.next_cursor,
    )


def list_for_group(group_id: str, limit: int, cursor: str | None) -> Page[Deployment]:
    from etikett.domain import runners

    runners.load_group(group_id)
    page = store.page_group_deployment_ids(group_id, limit, cursor)
    return Page(items=[get(i) for i in page.items], next_cursor=page.next_cursor)


# --- creating --------------------------------------------------------------------------------


def create(invocation: Invocation, request: NewDeployment) -> Deployment:
    from etikett.domain import flow_checks, printers, runners
    from etikett.flows.findings import has_errors

    caller = invocation.caller
    assert caller is not None
    document = flows.document_of(flows.load_version(request.flow_id, request.version))
    findings = flow_checks.lint(document)
    if has_errors(findings):
        raise InvalidRequest(
            f"Version {request.version} of {request.flow_id} has lint errors; fix them first.",
            ProblemCode.DEPLOYMENT_FLOW_HAS_ERRORS,
            findings=[f.model_dump() for f in findings if f.severity == "error"][:50],
        )
    seen: set[str] = set()
    for index, stage in enumerate(request.stages):
        for group_id in stage.group_ids:
            if group_id in seen:
                raise InvalidRequest.field(
                    f"body.stages.{index}.group_ids", f"{group_id} is in an earlier stage"
                )
            seen.add(group_id)
            runners.load_group(group_id)
    for alias, printer_id in request.printers.items():
        _check_alias(alias)
        printers.load(printer_id)
    if (
        caller.actor != "human"
        and policies.enabled(policies.AI_APPROVAL)
        and not store.was_deployed(request.flow_id, request.version)
    ):
        raise HumanRequired(
            f"Version {request.version} of {request.flow_id} was never deployed; while "
            f"{policies.AI_APPROVAL} is on, a person must deploy it first.",
            flow_id=request.flow_id,
            version=request.version,
            policy=policies.AI_APPROVAL,
        )
    now = clock.now()
    record = DeploymentRecord(
        id=new_id("dep"),
        flow_id=request.flow_id,
        version=request.version,
        status="awaiting_approval",
        stages=[
            {
                "index": index,
                "group_ids": stage.group_ids,
                "status": "awaiting_approval" if index == 0 else "pending",
            }
            for index, stage in enumerate(request.stages)
        ],
        printers={
            alias: {"printer_id": printer_id, "by_runner": {}}
            for alias, printer_id in request.printers.items()
        },
        context={
            name: _context_entry(value, caller.subject, now)
            for name, value in request.context.items()
        },
        author_actor=caller.actor,
        author_subject=caller.subject,
        created_at=now,
        updated_at=now,
        rev=0,
    )
    details = {"flow_id": request.flow_id, "version": request.version}
    with UnitOfWork(audit.record(invocation, record.id, details=details)) as uow:
        store.add(uow, record)
    return view(record, [])


def _check_alias(alias: str) -> None:
    import re

    if not re.match(IDENTIFIER, alias):
        raise InvalidRequest.field("printers", f"{alias!r} is not a valid printer alias")


def _context_entry(value: Any, subject: str, at: Any) -> dict[str, Any]:
    return {"value": value, "updated_at": clock.rfc3339(at), "updated_by": subject}


# --- approval, progress and rollback --------------------------------------------------------


def approve(invocation: Invocation, deployment_id: str, request: Approval) -> Deployment:
    from etikett.domain import runners

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
    stage.update(status="rolling_out", approved_by=caller.subject, approved_at=clock.rfc3339(now))
    after = dataclasses.replace(record, stages=new_stages, status="rolling_out", updated_at=now)
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
            detail=None if runners.status_of(runner, now) == "online" else "offline",
            updated_at=now,
        )
        for group_id in stage["group_ids"]
        for runner in _runners_of(group_id)
    ]
    details = {"stage": request.stage, "comment": request.comment}
    with _saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)
        for target in targets:
            store.set_group_flow(uow, target)
        for state in states:
            store.put_runner_state(uow, state)
        store.mark_deployed(uow, record)
    advance(deployment_id)
    return get(deployment_id)


def _runners_of(group_id: str) -> list[RunnerRecord]:
    from etikett.domain import runners

    return [r for r in runners.members(group_id) if r.state == "active"]


def _saving(record: DeploymentRecord, entry: AuditRecord | None = None) -> UnitOfWork:
    """The unit of work of a change to `record`: refused (409) when it changed meanwhile."""
    stale = Conflict(
        f"{record.id} changed meanwhile; read it again.",
        ProblemCode.RESOURCE_CONFLICT,
        deployment_id=record.id,
    )
    return UnitOfWork(entry, errors={"deployment.unchanged": stale})


def advance(deployment_id: str) -> None:
    """Moves the rolling-out stage on from what its Runners reported: failed when one failed,
    active when every online Runner runs the version (the next stage then awaits approval). A
    failed stage rolls out again once no Runner reports a failure (it tried again)."""
    from etikett.domain import runners

    for _ in range(5):
        record = load(deployment_id)
        index = next(
            (s["index"] for s in record.stages if s["status"] in ("rolling_out", "failed")), None
        )
        if index is None or record.status in _ENDED:
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
            online = [states.get(r.id) for r in members if runners.status_of(r, now) == "online"]
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
        after = dataclasses.replace(record, stages=stages, status=status, updated_at=now)
        try:
            with UnitOfWork() as uow:
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
        if old is None or old.status in _ENDED:
            continue
        groups = [g for s in old.stages for g in s["group_ids"]]
        still = [
            g
            for g in groups
            if (t := store.group_flow(g, old.flow_id)) is not None and t.deployment_id == old.id
        ]
        if still:
            continue
        superseded = dataclasses.replace(old, status="superseded", updated_at=clock.now())
        try:
            with UnitOfWork() as uow:
                store.save(uow, old, superseded)
                store.release_flow(uow, old)
        except ConditionFailed:
            continue


def rollback(invocation: Invocation, deployment_id: str, request: Rollback) -> Deployment:
    record = load(deployment_id)
    if record.status in _ENDED:
        raise Conflict(
            f"{deployment_id} is {record.status} already.",
            ProblemCode.DEPLOYMENT_ENDED,
            deployment_id=deployment_id,
            status=record.status,
        )
    now = clock.now()
    restored: list[GroupFlowRecord] = []
    removed: list[GroupFlowRecord] = []
    stages = copy.deepcopy(record.stages)
    for stage in stages:
        if stage["status"] in _APPROVED:
            for group_id in stage["group_ids"]:
                target = store.group_flow(group_id, record.flow_id)
                if target is None or target.deployment_id != record.id:
                    continue  # a newer deployment runs there now
                if target.previous_deployment_id and target.previous_version:
                    restored.append(
                        GroupFlowRecord(
                            group_id=group_id,
                            flow_id=record.flow_id,
                            deployment_id=target.previous_deployment_id,
                            version=target.previous_version,
                            previous_deployment_id=None,
                            previous_version=None,
                            since=now,
                        )
                    )
                else:
                    removed.append(target)
        stage["status"] = "rolled_back" if stage["status"] != "pending" else "pending"
    after = dataclasses.replace(record, stages=stages, status="rolled_back", updated_at=now)
    # The deployments put back on a group run there again: they use their flow again, and one
    # this deployment superseded is active again (so that it, too, can be rolled back).
    running_again = [
        previous
        for previous_id in sorted({target.deployment_id for target in restored})
        if (previous := store.get(previous_id)) is not None
    ]
    details = {
        "comment": request.comment,
        "restored": {t.group_id: f"{t.deployment_id}@{t.version}" for t in restored},
        "stopped": [t.group_id for t in removed],
    }
    with _saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)
        for target in restored:
            store.set_group_flow(uow, target)
        for previous in running_again:
            if previous.status == "superseded":
                revived = dataclasses.replace(previous, status="active", updated_at=now)
                store.save(uow, previous, revived)
            store.use_flow(uow, previous.flow_id, previous.id)
        for target in removed:
            store.remove_group_flow(uow, target)
        store.release_flow(uow, record)
    return get(deployment_id)


def report(runner: Any, deployment_id: str, request: RunnerReport) -> None:
    """A Runner's progress with a deployment it was given."""
    record = load(deployment_id)
    store.report_runner(
        RunnerStateRecord(
            deployment_id=record.id,
            runner_id=runner.id,
            group_id=runner.group_id,
            status=request.status,
            detail=request.detail,
            updated_at=clock.now(),
        )
    )
    advance(deployment_id)


# --- context and printers --------------------------------------------------------------------


class ContextParameter(BaseModel):
    name: str
    value: Any
    updated_at: str
    updated_by: str


def context(deployment_id: str) -> list[ContextParameter]:
    record = load(deployment_id)
    return [ContextParameter(name=name, **entry) for name, entry in sorted(record.context.items())]


def context_values(record: DeploymentRecord) -> dict[str, Any]:
    return {name: entry["value"] for name, entry in record.context.items()}


def put_context(
    invocation: Invocation, deployment_id: str, name: str, value: Any
) -> ContextParameter:
    caller = invocation.caller
    assert caller is not None
    if not name or len(name) > 100:
        raise InvalidRequest.field("path.name", "1 to 100 characters")
    record = load(deployment_id)
    before = record.context.get(name)
    now = clock.now()
    entry = _context_entry(value, caller.subject, now)
    after = dataclasses.replace(record, context={**record.context, name: entry}, updated_at=now)
    details = {"name": name, "before": before and before["value"], "after": value}
    with _saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)
    return ContextParameter(name=name, **entry)


def delete_context(invocation: Invocation, deployment_id: str, name: str) -> None:
    record = load(deployment_id)
    if name not in record.context:
        raise NotFound(
            f"{deployment_id} has no context parameter {name!r}.", ProblemCode.CONTEXT_NOT_FOUND
        )
    before = record.context[name]["value"]
    context = {k: v for k, v in record.context.items() if k != name}
    after = dataclasses.replace(record, context=context, updated_at=clock.now())
    details = {"name": name, "before": before}
    with _saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)


def assigned_printers(deployment_id: str) -> list[AssignedPrinter]:
    record = load(deployment_id)
    return [
        AssignedPrinter(alias=alias, **entry) for alias, entry in sorted(record.printers.items())
    ]


def put_printer(
    invocation: Invocation, deployment_id: str, alias: str, request: PrinterAssignment
) -> AssignedPrinter:
    from etikett.domain import printers

    _check_alias(alias)
    printers.load(request.printer_id)
    for printer_id in request.by_runner.values():
        printers.load(printer_id)
    record = load(deployment_id)
    before = record.printers.get(alias)
    assigned = {**record.printers, alias: request.model_dump()}
    after = dataclasses.replace(record, printers=assigned, updated_at=clock.now())
    details = {"alias": alias, "before": before, "after": request.model_dump()}
    with _saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)
    return AssignedPrinter(alias=alias, **request.model_dump())


def delete_printer(invocation: Invocation, deployment_id: str, alias: str) -> None:
    record = load(deployment_id)
    if alias not in record.printers:
        raise NotFound(
            f"{deployment_id} assigns no printer to {alias!r}.",
            ProblemCode.DEPLOYMENT_PRINTER_NOT_FOUND,
        )
    before = record.printers[alias]
    assigned = {k: v for k, v in record.printers.items() if k != alias}
    after = dataclasses.replace(record, printers=assigned, updated_at=clock.now())
    details = {"alias": alias, "before": before}
    with _saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)


def printer_for(record: DeploymentRecord, alias: str, runner_id: str) -> str | None:
    entry = record.printers.get(alias)
    if entry is None:
        return None
    return str(entry.get("by_runner", {}).get(runner_id) or entry["printer_id"])
