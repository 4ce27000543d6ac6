"""What a deployment gives its flow on site: context parameters and printers by alias (per
Runner if need be), each change audited (and held back from approved stages while
`deploymentChangesNeedApproval` is on: see changes.py).
"""

from __future__ import annotations

from typing import Any

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.deployments import changes
from etikett.domain.deployments.creating import PRINTER_GONE, check_alias, context_entry
from etikett.domain.deployments.models import (
    MAX_PRINTERS,
    AssignedPrinter,
    ContextParameter,
    OfflinePolicy,
    PrinterAssignment,
)
from etikett.domain.deployments.records import load, saving
from etikett.domain.deployments.views import offline_policy
from etikett.domain.printers import printer_records
from etikett.domain.runners import context_limits, runner_notices
from etikett.store import deployments as store
from etikett.store.conditions import ConditionName
from etikett.store.deployments import DeploymentRecord
from etikett_engine.errors import InvalidRequest, NotFound, ProblemCode


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
    context_limits.check_put(deployment_id, context_values(record), name, value)
    before = record.context.get(name)
    now = clock.now()
    entry = context_entry(value, caller.subject, now)
    after = record._replace(context={**record.context, name: entry}, updated_at=now)
    details = {"name": name, "before": before and before["value"], "after": value}
    after, held, notes = changes.after_change(record, after)
    audited = audit.record(invocation, deployment_id, details={**details, **notes})
    with saving(record, audited) as uow:
        store.save(uow, record, after)
        changes.hold(uow, held)
    _tell(record)
    return ContextParameter(name=name, **entry)


def delete_context(invocation: Invocation, deployment_id: str, name: str) -> None:
    record = load(deployment_id)
    if name not in record.context:
        raise NotFound(
            f"{deployment_id} has no context parameter {name!r}.", ProblemCode.CONTEXT_NOT_FOUND
        )
    before = record.context[name]["value"]
    context = {k: v for k, v in record.context.items() if k != name}
    after = record._replace(context=context, updated_at=clock.now())
    details = {"name": name, "before": before}
    after, held, notes = changes.after_change(record, after)
    entry = audit.record(invocation, deployment_id, details={**details, **notes})
    with saving(record, entry) as uow:
        store.save(uow, record, after)
        changes.hold(uow, held)
    _tell(record)


def put_offline_policy(
    invocation: Invocation, deployment_id: str, policy: OfflinePolicy
) -> OfflinePolicy:
    """Replace the deployment's offline policy; its Runners get it with their next bundle."""

    record = load(deployment_id)
    before = offline_policy(record)
    after = record._replace(offline=policy.model_dump(), updated_at=clock.now())
    details = {"before": before.model_dump(), "after": policy.model_dump()}
    with saving(record, audit.record(invocation, deployment_id, details=details)) as uow:
        store.save(uow, record, after)
    _tell(after)  # the signed bundle carries the policy: its Runners fetch the new one now
    return policy


def assigned_printers(deployment_id: str) -> list[AssignedPrinter]:
    record = load(deployment_id)
    return [
        AssignedPrinter(alias=alias, **entry) for alias, entry in sorted(record.printers.items())
    ]


def put_printer(
    invocation: Invocation, deployment_id: str, alias: str, request: PrinterAssignment
) -> AssignedPrinter:

    check_alias(alias)
    printer_records.load(request.printer_id)
    for printer_id in request.by_runner.values():
        printer_records.load(printer_id)
    record = load(deployment_id)
    before = record.printers.get(alias)
    assigned = {**record.printers, alias: request.model_dump()}
    if len(store.printer_ids(assigned)) > MAX_PRINTERS:
        raise InvalidRequest.field(
            "body", f"the deployment would name more than {MAX_PRINTERS} distinct printers"
        )
    after = record._replace(printers=assigned, updated_at=clock.now())
    details = {"alias": alias, "before": before, "after": request.model_dump()}
    after, held, notes = changes.after_change(record, after)
    entry = audit.record(invocation, deployment_id, details={**details, **notes})
    with saving(record, entry) as uow:
        uow.fail_as(ConditionName.PRINTER_EXISTS, PRINTER_GONE[ConditionName.PRINTER_EXISTS])
        store.save(uow, record, after)
        store.reassign_printers(uow, deployment_id, record.printers, assigned)
        changes.hold(uow, held)
    _tell(record)
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
    after = record._replace(printers=assigned, updated_at=clock.now())
    details = {"alias": alias, "before": before}
    after, held, notes = changes.after_change(record, after)
    entry = audit.record(invocation, deployment_id, details={**details, **notes})
    with saving(record, entry) as uow:
        store.save(uow, record, after)
        store.reassign_printers(uow, deployment_id, record.printers, assigned)
        changes.hold(uow, held)
    _tell(record)


def printer_for(record: DeploymentRecord, alias: str, runner_id: str) -> str | None:
    return printer_in(record.printers, alias, runner_id)


def printer_in(printers: dict[str, Any], alias: str, runner_id: str) -> str | None:
    """The printer `alias` names for the Runner in a deployment's (or a held) printer aliases."""
    entry = printers.get(alias)
    if entry is None:
        return None
    return str(entry.get("by_runner", {}).get(runner_id) or entry["printer_id"])


def _tell(record: DeploymentRecord) -> None:
    """The deployment's Runners read what changed (an approved stage runs it at once)."""
    runner_notices.groups_changed(g for stage in record.stages for g in stage["group_ids"])
