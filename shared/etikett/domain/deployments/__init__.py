"""Deployments: a flow version rolled out to Runner groups in stages, each approved before it
starts, rolled back to what ran before. Runners report per deployment; a stage is active once
every online Runner of its groups runs the version, and the next stage then awaits approval.

While `aiFreigabePflicht` is on, a person must deploy a flow version that never ran anywhere and
must approve each stage; rolling back (to versions that ran before) is open to agents too.

The aggregate's operations, by module: creating.py, rollout.py (approval, progress, rollback),
assignments.py (context and printers), views.py (reading), on records.py and models.py.
"""

from etikett.domain.deployments.assignments import (
    assigned_printers,
    context,
    context_values,
    delete_context,
    delete_printer,
    printer_for,
    put_context,
    put_printer,
)
from etikett.domain.deployments.creating import create
from etikett.domain.deployments.models import (
    Approval,
    AssignedPrinter,
    Author,
    ContextParameter,
    Deployment,
    DeploymentStatus,
    NewDeployment,
    PrinterAssignment,
    Rollback,
    RunnerReport,
    RunnerState,
    RunnerStatus,
    Stage,
    StageIn,
    StageStatus,
)
from etikett.domain.deployments.records import load
from etikett.domain.deployments.rollout import advance, approve, report, rollback
from etikett.domain.deployments.views import get, list_deployments, list_for_group, view

__all__ = [
    "Approval",
    "AssignedPrinter",
    "Author",
    "ContextParameter",
    "Deployment",
    "DeploymentStatus",
    "NewDeployment",
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
    "printer_for",
    "put_context",
    "put_printer",
    "report",
    "rollback",
    "view",
]
