"""Routes of the Deployments group: staged rollouts of flow versions to Runner groups, their
approval and rollback, deployment context and printer aliases."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Path, Response

from etikett.api import flow_examples as ex
from etikett.api.access import any_caller, requires
from etikett.api.context_bounds import CONTEXT_BOUNDS
from etikett.api.pagination import DEFAULT, Cursor, Filter, ItemList, Limit, static_page
from etikett.api.routing import Responses, router
from etikett.domain import deployments
from etikett.domain.actors import Invocation
from etikett.domain.runners.runners import CONTEXT_NAME, ContextValue

routes = router(prefix="/api/v1", tags=["Deployments"])

Anyone = Annotated[Invocation, any_caller()]
Operator = Annotated[Invocation, requires("operator")]
Approver = Annotated[Invocation, requires("approver")]
OperatorOrDesigner = Annotated[Invocation, requires("operator", "designer")]

ContextName = Annotated[
    str, Path(pattern=CONTEXT_NAME, description="Letters, digits, _ . -; up to 64 characters.")
]
Alias = Annotated[
    str, Path(pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,63}$", description="The flow's printer alias.")
]
_NOT_FOUND: Responses = {404: {"description": "Unknown deployment (`deployment.not_found`)"}}
_POLICY: Responses = {403: {"description": "Forbidden (`auth.forbidden`, `policy.human_required`)"}}


@routes.get(
    "/deployments",
    operation_id="listDeployments",
    response_model=ItemList[deployments.Deployment],
    summary="List deployments, newest first",
)
def list_deployments(
    invocation: Anyone,
    flow_id: Filter = None,
    status: deployments.DeploymentStatus | None = None,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
) -> Any:
    page = deployments.list_deployments(flow_id, status, limit, cursor)
    return ItemList[deployments.Deployment].of(page)


@routes.post(
    "/deployments",
    operation_id="createDeployment",
    response_model=deployments.Deployment,
    status_code=201,
    summary="Deploy a flow version to Runner groups in stages",
    description="Stage 0 then awaits approval (postDeploymentApproval). The version must lint "
    "without errors (422 `deployment.flow_has_errors`). While aiFreigabePflicht is on, a "
    "version never deployed before needs a person (403 `policy.human_required`).",
    responses={
        **_POLICY,
        404: {"description": "Unknown flow, version, group or printer"},
        413: {"description": "A context value over 4 KB as JSON (`context.value_too_large`)"},
        422: {
            "description": "`deployment.flow_has_errors`, `request.invalid`, "
            "`context.too_large` (context over 64 KB together or more than 100 parameters)"
        },
    },
)
def create_deployment(
    body: Annotated[
        deployments.NewDeployment, ex.body("Two halls, one after the other", ex.NEW_DEPLOYMENT)
    ],
    invocation: Operator,
) -> deployments.Deployment:
    return deployments.create(invocation, body)


@routes.get(
    "/deployments/{deploymentId}",
    operation_id="getDeployment",
    response_model=deployments.Deployment,
    summary="Read a deployment with its stages and each Runner's status",
    responses=_NOT_FOUND,
)
def get_deployment(deploymentId: str, invocation: Anyone) -> deployments.Deployment:
    return deployments.get(deploymentId)


@routes.post(
    "/deployments/{deploymentId}/approval",
    operation_id="postDeploymentApproval",
    response_model=deployments.Deployment,
    summary="Approve the stage awaiting approval; its Runners then apply the version",
    description="While aiFreigabePflicht is on, only a person may approve. An approved stage "
    "whose context or printer aliases changed since (`changed_since_approval`) is approved "
    "again the same way: what it runs now is approved, and a change held for it "
    "(`changes_await_approval`, policy deploymentChangesNeedApproval) reaches its Runners.",
    responses={
        **_NOT_FOUND,
        **_POLICY,
        409: {
            "description": "The stage is not awaiting approval, nor changed since its approval "
            "(`deployment.stage_not_awaiting`)"
        },
    },
)
def approve(
    deploymentId: str,
    body: Annotated[deployments.Approval, ex.body("Approve the second stage", ex.APPROVAL)],
    invocation: Approver,
) -> deployments.Deployment:
    return deployments.approve(invocation, deploymentId, body)


@routes.post(
    "/deployments/{deploymentId}/rollback",
    operation_id="postDeploymentRollback",
    response_model=deployments.Deployment,
    summary="Put every group of the deployment back on the version that ran there before",
    description="Groups where no version ran before stop the flow. No approval is needed: "
    "only versions that ran before come back.",
    responses={**_NOT_FOUND, 409: {"description": "Rolled back or superseded already"}},
)
def rollback(
    deploymentId: str,
    invocation: Operator,
    body: Annotated[
        deployments.Rollback | None, ex.body("Roll back with a reason", ex.ROLLBACK)
    ] = None,
) -> deployments.Deployment:
    return deployments.rollback(invocation, deploymentId, body or deployments.Rollback())


@routes.get(
    "/deployments/{deploymentId}/context",
    operation_id="getDeploymentContext",
    response_model=ItemList[deployments.ContextParameter],
    summary="Deployment-level context parameters (deployment < group < Runner)",
    responses=_NOT_FOUND,
)
def get_context(
    deploymentId: str, invocation: OperatorOrDesigner, limit: Limit = DEFAULT, cursor: Cursor = None
) -> Any:
    page = static_page(deployments.context(deploymentId), limit, cursor)
    return ItemList[deployments.ContextParameter].of(page)


@routes.put(
    "/deployments/{deploymentId}/context/{name}",
    operation_id="putDeploymentContextParameter",
    response_model=deployments.ContextParameter,
    summary="Set a deployment-level context parameter",
    description="A value is at most 4 KB as JSON; a deployment's parameters at most 64 KB "
    "together and at most 100.",
    responses={**_NOT_FOUND, **CONTEXT_BOUNDS},
)
def put_context(
    deploymentId: str,
    name: ContextName,
    body: Annotated[ContextValue, ex.body("Any JSON value", ex.CONTEXT_VALUE)],
    invocation: Operator,
) -> deployments.ContextParameter:
    return deployments.put_context(invocation, deploymentId, name, body.value)


@routes.delete(
    "/deployments/{deploymentId}/context/{name}",
    operation_id="deleteDeploymentContextParameter",
    status_code=204,
    summary="Remove a deployment-level context parameter",
    responses=_NOT_FOUND,
)
def delete_context(deploymentId: str, name: ContextName, invocation: Operator) -> Response:
    deployments.delete_context(invocation, deploymentId, name)
    return Response(status_code=204)


@routes.put(
    "/deployments/{deploymentId}/offline-policy",
    operation_id="putDeploymentOfflinePolicy",
    response_model=deployments.OfflinePolicy,
    summary="Allow or forbid offline printing, and bound it",
    description="Whether the deployment's Runners print on site while the service is "
    "unreachable, for how long and how many labels, and the size of the counter blocks they "
    "reserve for it. Off by default; Runners get the policy in their next signed bundle.",
    responses={**_NOT_FOUND, 422: {"description": "A bound out of range (`request.invalid`)"}},
)
def put_offline_policy(
    deploymentId: str,
    body: Annotated[deployments.OfflinePolicy, ex.body("Eight hours, 2000 labels", ex.OFFLINE)],
    invocation: Operator,
) -> deployments.OfflinePolicy:
    return deployments.put_offline_policy(invocation, deploymentId, body)


@routes.get(
    "/deployments/{deploymentId}/printers",
    operation_id="getDeploymentPrinters",
    response_model=ItemList[deployments.AssignedPrinter],
    summary="The printers assigned to the flow's printer aliases",
    responses=_NOT_FOUND,
)
def get_printers(
    deploymentId: str, invocation: Anyone, limit: Limit = DEFAULT, cursor: Cursor = None
) -> Any:
    page = static_page(deployments.assigned_printers(deploymentId), limit, cursor)
    return ItemList[deployments.AssignedPrinter].of(page)


@routes.put(
    "/deployments/{deploymentId}/printers/{name}",
    operation_id="putDeploymentPrinter",
    response_model=deployments.AssignedPrinter,
    summary="Assign a printer to an alias (with per-Runner overrides)",
    responses=_NOT_FOUND,
)
def put_printer(
    deploymentId: str,
    name: Alias,
    body: Annotated[
        deployments.PrinterAssignment,
        ex.body("One printer, another for one Runner", ex.PRINTER_ASSIGNMENT),
    ],
    invocation: Operator,
) -> deployments.AssignedPrinter:
    return deployments.put_printer(invocation, deploymentId, name, body)


@routes.delete(
    "/deployments/{deploymentId}/printers/{name}",
    operation_id="deleteDeploymentPrinter",
    status_code=204,
    summary="Remove a printer alias's assignment",
    responses=_NOT_FOUND,
)
def delete_printer(deploymentId: str, name: Alias, invocation: Operator) -> Response:
    deployments.delete_printer(invocation, deploymentId, name)
    return Response(status_code=204)


@routes.get(
    "/runner-groups/{groupId}/deployments",
    operation_id="listRunnerGroupDeployments",
    response_model=ItemList[deployments.Deployment],
    summary="The deployments that target a Runner group, newest first",
    responses={404: {"description": "Unknown group (`runner_group.not_found`)"}},
)
def list_group_deployments(
    groupId: str, invocation: Anyone, limit: Limit = DEFAULT, cursor: Cursor = None
) -> Any:
    return ItemList[deployments.Deployment].of(deployments.list_for_group(groupId, limit, cursor))
