"""Deployments: a flow version rolled out to Runner groups in stages, each approved before it
starts, rolled back to what ran before. Runners report per deployment; a stage is active once
every online Runner of its groups runs the version, and the next stage then awaits approval.

While `aiFreigabePflicht` is on, a person must deploy a flow version that never ran anywhere and
must approve each stage; rolling back (to versions that ran before) is open to agents too.

The aggregate's operations, by module: creating.py, rollout.py (approval, progress, rollback),
assignments.py (context and printers), changes.py (changes after approval, held for the next
one), views.py (reading), on records.py and models.py; what a Runner reports of a deployment
is in runner_reports.py.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from etikett.domain.deployments.assignments import (
        assigned_printers,
        context,
        context_values,
        delete_context,
        delete_printer,
        printer_for,
        printer_in,
        put_context,
        put_offline_policy,
        put_printer,
    )
    from etikett.domain.deployments.changes import running
    from etikett.domain.deployments.creating import create
    from etikett.domain.deployments.models import (
        MAX_GROUPS,
        MAX_PRINTERS,
        Approval,
        AssignedPrinter,
        Author,
        ContextParameter,
        Deployment,
        DeploymentStatus,
        NewDeployment,
        OfflinePolicy,
        PrinterAssignment,
        Rollback,
        RunnerState,
        RunnerStatus,
        Stage,
        StageIn,
        StageStatus,
    )
    from etikett.domain.deployments.records import load
    from etikett.domain.deployments.rollout import advance, approve, report, rollback
    from etikett.domain.deployments.runner_reports import RunnerReport
    from etikett.domain.deployments.views import (
        get,
        list_deployments,
        list_for_group,
        offline_policy,
        view,
    )

# Each name loads its module on first use (PEP 562): a function that only declares routes with
# these models (the Runner agent channel's RunnerReport) does not import the whole aggregate.
_MODULES = {
    "MAX_GROUPS": "models",
    "MAX_PRINTERS": "models",
    "Approval": "models",
    "AssignedPrinter": "models",
    "Author": "models",
    "ContextParameter": "models",
    "Deployment": "models",
    "DeploymentStatus": "models",
    "NewDeployment": "models",
    "OfflinePolicy": "models",
    "PrinterAssignment": "models",
    "Rollback": "models",
    "RunnerReport": "runner_reports",
    "RunnerState": "models",
    "RunnerStatus": "models",
    "Stage": "models",
    "StageIn": "models",
    "StageStatus": "models",
    "advance": "rollout",
    "approve": "rollout",
    "assigned_printers": "assignments",
    "context": "assignments",
    "context_values": "assignments",
    "create": "creating",
    "delete_context": "assignments",
    "delete_printer": "assignments",
    "get": "views",
    "list_deployments": "views",
    "list_for_group": "views",
    "load": "records",
    "offline_policy": "views",
    "printer_for": "assignments",
    "printer_in": "assignments",
    "put_context": "assignments",
    "put_offline_policy": "assignments",
    "put_printer": "assignments",
    "report": "rollout",
    "rollback": "rollout",
    "running": "changes",
    "view": "views",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


__all__ = [
    "MAX_GROUPS",
    "MAX_PRINTERS",
    "Approval",
    "AssignedPrinter",
    "Author",
    "ContextParameter",
    "Deployment",
    "DeploymentStatus",
    "NewDeployment",
    "OfflinePolicy",
    "PrinterAssignment",
    "Rollback",
    "RunnerReport",
    "RunnerState",
    "RunnerStatus",
    "Stage",
    "StageIn",
    "StageStatus",
    "advance",
    "approve",
    "assigned_printers",
    "context",
    "context_values",
    "create",
    "delete_context",
    "delete_printer",
    "get",
    "list_deployments",
    "list_for_group",
    "load",
    "offline_policy",
    "printer_for",
    "printer_in",
    "put_context",
    "put_offline_policy",
    "put_printer",
    "report",
    "rollback",
    "running",
    "view",
]
