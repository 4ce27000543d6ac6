"""A new deployment: its flow version checked, its stages' groups, printers and context; while
`aiFreigabePflicht` is on, a flow version that never ran anywhere needs a person.
"""

from __future__ import annotations

import re
from typing import Any

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.deployments.models import Deployment, NewDeployment
from etikett.domain.deployments.views import view
from etikett.domain.flows import flow_checks, flows
from etikett.domain.printers import printer_records
from etikett.domain.runners import context_limits, runner_records
from etikett.domain.users import policies
from etikett.ids import new_id
from etikett.store import deployments as store
from etikett.store.conditions import ConditionName
from etikett.store.deployments import DeploymentRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.dsl.label import IDENTIFIER
from etikett_engine.errors import HumanRequired, InvalidRequest, NotFound, ProblemCode
from etikett_engine.flows.findings import has_errors


def create(invocation: Invocation, request: NewDeployment) -> Deployment:

    caller = invocation.caller
    assert caller is not None
    context_limits.check_all("The deployment", request.context)
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
            runner_records.load_group(group_id)
    for alias, printer_id in request.printers.items():
        check_alias(alias)
        printer_records.load(printer_id)
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
            name: context_entry(value, caller.subject, now)
            for name, value in request.context.items()
        },
        offline=request.offline.model_dump(),
        author_actor=caller.actor,
        author_subject=caller.subject,
        created_at=now,
        updated_at=now,
        rev=0,
    )
    details = {
        "flow_id": request.flow_id,
        "version": request.version,
        "offline": request.offline.model_dump(),
    }
    flow_gone = NotFound(
        f"No flow {request.flow_id} (deleted meanwhile).",
        ProblemCode.FLOW_NOT_FOUND,
        flow_id=request.flow_id,
    )
    with UnitOfWork(
        audit.record(invocation, record.id, details=details),
        errors={**PRINTER_GONE, ConditionName.FLOW_CLAIMABLE: flow_gone},
    ) as uow:
        store.add(uow, record)
        store.reassign_printers(uow, record.id, {}, record.printers)
    return view(record, [])


# The failed condition of a printer deleted while a deployment assigns it.
PRINTER_GONE = {
    ConditionName.PRINTER_EXISTS: NotFound(
        "A printer to assign was deleted meanwhile.", ProblemCode.PRINTER_NOT_FOUND
    )
}


def check_alias(alias: str) -> None:

    if not re.match(IDENTIFIER, alias):
        raise InvalidRequest.field("printers", f"{alias!r} is not a valid printer alias")


def context_entry(value: Any, subject: str, at: Any) -> dict[str, Any]:
    return {"value": value, "updated_at": clock.rfc3339(at), "updated_by": subject}
