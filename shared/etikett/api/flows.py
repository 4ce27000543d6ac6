"""Routes of the Flows group: flows, their documents and versions, the node registry, lint,
dry runs and recorded runs."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Path, Query, Response

from etikett.api import flow_examples as ex
from etikett.api.access import any_caller, requires
from etikett.api.pagination import DEFAULT, Cursor, Filter, ItemList, Limit
from etikett.api.routing import Responses, router
from etikett.domain.actors import Invocation
from etikett.domain.documents import DocumentPatch
from etikett.domain.flows import flow_runs, flows
from etikett_engine.dsl.flow_registry import FlowRegistry, registry
from etikett_engine.dsl.strict import MAX_VERSION

routes = router(prefix="/api/v1", tags=["Flows"])

Anyone = Annotated[Invocation, any_caller()]
Designer = Annotated[Invocation, requires("designer")]
DesignerOrOperator = Annotated[Invocation, requires("designer", "operator")]

_NOT_FOUND: Responses = {
    404: {"description": "Unknown flow or version (`flow.not_found`, `flow.version_not_found`)"}
}
_DOCUMENT_ERRORS: Responses = {
    422: {
        "description": "`document.invalid` (params.errors name the JSON path where the document "
        "is malformed: ids, wires to missing nodes, sizes), `document.id_changed`, "
        "`document.patch_failed`; `flow.path_refused` (params.findings: a folder trigger's "
        "or a constant action.file path with `..`, a drive or `:`, a network path or a NUL; "
        "an absolute path is allowed, the Runner decides). Other well-formed but wrong "
        "documents are saved and answered with lint `findings`."
    },
    413: {"description": "Document too large (`document.too_large`)"},
}


@routes.get(
    "/flows",
    operation_id="listFlows",
    response_model=ItemList[flows.Flow],
    summary="List flows, by name",
)
def list_flows(invocation: Anyone, limit: Limit = DEFAULT, cursor: Cursor = None) -> Any:
    return ItemList[flows.Flow].of(flows.list_flows(limit, cursor))


@routes.post(
    "/flows",
    operation_id="createFlow",
    response_model=flows.CreatedFlow,
    status_code=201,
    summary="Create a flow; its document becomes version 1",
    description="Node types and their fields: getFlowRegistry (svc://registry/flows); the "
    "document's schema: svc://schema/flow. The answer carries version 1's lint findings (as "
    "postFlowLint and every patchFlowDocument answer do); try it with postFlowDryRun.",
    responses=_DOCUMENT_ERRORS,
)
def create_flow(
    body: Annotated[flows.NewFlow, ex.body("A folder of CSV files to SSCC labels", ex.NEW_FLOW)],
    invocation: Designer,
) -> flows.CreatedFlow:
    return flows.create(invocation, body)


@routes.get(
    "/flows/registry",
    operation_id="getFlowRegistry",
    response_model=FlowRegistry,
    summary="The flow node types, each with the JSON Schema of its fields",
    description="The same as the MCP resource svc://registry/flows. CEL fields see `record`, "
    "`context` (the effective context parameters) and `runner` ({id, name, group_id}).",
)
def get_registry(invocation: Anyone) -> dict[str, Any]:

    return registry()


@routes.get(
    "/flows/{flowId}",
    operation_id="getFlow",
    response_model=flows.Flow,
    summary="Read a flow",
    responses=_NOT_FOUND,
)
def get_flow(flowId: str, invocation: Anyone) -> flows.Flow:
    return flows.get(flowId)


@routes.patch(
    "/flows/{flowId}",
    operation_id="patchFlow",
    response_model=flows.Flow,
    summary="Rename a flow or change its description",
    responses=_NOT_FOUND,
)
def patch_flow(
    flowId: str,
    body: Annotated[flows.FlowChange, ex.body("Rename", ex.FLOW_CHANGE)],
    invocation: Designer,
) -> flows.Flow:
    return flows.change(invocation, flowId, body)


@routes.delete(
    "/flows/{flowId}",
    operation_id="deleteFlow",
    status_code=204,
    summary="Delete a flow with its versions and runs",
    description="Refused (409 `flow.in_use`) while a deployment uses the flow.",
    responses={**_NOT_FOUND, 409: {"description": "A deployment uses it (`flow.in_use`)"}},
)
def delete_flow(flowId: str, invocation: Designer) -> Response:
    flows.delete(invocation, flowId)
    return Response(status_code=204)


@routes.get(
    "/flows/{flowId}/document",
    operation_id="getFlowDocument",
    response_model=flows.FlowDocumentAnswer,
    summary="Read the flow document (latest or ?version=N) with its lint findings",
    responses=_NOT_FOUND,
)
def get_document(
    flowId: str,
    invocation: Anyone,
    version: Annotated[int | None, Query(ge=1, le=MAX_VERSION)] = None,
) -> flows.FlowDocumentAnswer:
    return flows.get_document(flowId, version)


@routes.patch(
    "/flows/{flowId}/document",
    operation_id="patchFlowDocument",
    response_model=flows.FlowDocumentAnswer,
    summary="Patch the flow document (RFC 6902); saves a new version and lints it",
    description="Operations apply to the latest version; `base_version` guards against "
    "overwriting a newer one (409 `document.version_conflict`). Node ids are kept: delete a "
    "node with `remove /nodes/<index>`, never change an `id`.",
    responses={
        **_NOT_FOUND,
        **_DOCUMENT_ERRORS,
        409: {"description": "Stale `base_version` (`document.version_conflict`)"},
    },
)
def patch_document(
    flowId: str,
    body: Annotated[DocumentPatch, ex.body("Change a condition", ex.DOCUMENT_PATCH)],
    invocation: Designer,
) -> flows.FlowDocumentAnswer:
    return flows.patch_document(invocation, flowId, body)


@routes.get(
    "/flows/{flowId}/versions",
    operation_id="listFlowVersions",
    response_model=ItemList[flows.FlowVersionEntry],
    summary="List a flow's versions, newest first",
    responses=_NOT_FOUND,
)
def list_versions(
    flowId: str, invocation: Anyone, limit: Limit = DEFAULT, cursor: Cursor = None
) -> Any:
    return ItemList[flows.FlowVersionEntry].of(flows.list_versions(flowId, limit, cursor))


@routes.get(
    "/flows/{flowId}/versions/{version}",
    operation_id="getFlowVersion",
    response_model=flows.FlowVersion,
    summary="Read one version of a flow with its author and document",
    responses=_NOT_FOUND,
)
def get_version(
    flowId: str, version: Annotated[int, Path(ge=1, le=MAX_VERSION)], invocation: Anyone
) -> flows.FlowVersion:
    return flows.get_version(flowId, version)


@routes.post(
    "/flows/{flowId}/lint",
    operation_id="postFlowLint",
    response_model=flow_runs.LintAnswer,
    summary="Lint a flow version, or unsaved changes: graph, fields, CEL and label references",
    description="Lints a saved `version` (default the latest) or a `document` given in the "
    "request (an editor's unsaved changes; nothing is saved). Codes: flow.no_trigger, "
    "flow.unknown_node_type, flow.field_invalid, flow.cel_invalid, flow.cel_name_unknown "
    "(warning: a record field, context parameter or Runner field no run will have; record "
    "fields and context are checked against `scope`), flow.cycle, flow.unreachable_node "
    "(warning), flow.fan_out (warning: a record may exceed the engine's budget of one record), "
    "flow.label_not_found, flow.label_not_released, flow.label_variable_unknown. Each finding "
    "has a JSON Pointer `path` into the document.",
    responses={
        **_NOT_FOUND,
        422: {
            "description": "`document.invalid` (a given document is malformed; params.errors "
            "name each path), `request.invalid` (both `version` and `document`)"
        },
    },
)
def lint(
    flowId: str,
    invocation: DesignerOrOperator,
    body: Annotated[
        flow_runs.LintRequest | None,
        ex.body(
            "Unsaved changes, with the names the editor knows",
            ex.LINT_UNSAVED_REQUEST,
            version=("Lint version 3", ex.LINT_REQUEST),
        ),
    ] = None,
) -> flow_runs.LintAnswer:
    return flow_runs.lint(flowId, body or flow_runs.LintRequest())


@routes.post(
    "/flows/{flowId}/dry-run",
    operation_id="postFlowDryRun",
    response_model=flow_runs.DryRunAnswer,
    summary="Run a flow version, or unsaved changes, on samples without any side effect",
    description="Runs a saved `version` (default the latest) or a `document` given in the "
    "request (an editor's unsaved changes; nothing is saved). Each sample enters the trigger "
    "and travels the wires; the answer traces every node and lists every side effect with "
    "`performed: false` and what it would have done (a print: label, version, printer alias, "
    "resolved variables, copies, counter values it would take). Nothing is printed, sent, "
    "written or counted.",
    responses={
        **_NOT_FOUND,
        422: {
            "description": "`flow.no_trigger`, `flow.not_runnable` (the wires form a cycle; "
            "params.findings), an unknown `trigger`, `document.invalid` (a given document is "
            "malformed)"
        },
    },
)
def dry_run(
    flowId: str,
    invocation: DesignerOrOperator,
    body: Annotated[
        flow_runs.DryRunRequest | None,
        ex.body(
            "One sample, as a Runner of Halle 3 would run it",
            ex.DRY_RUN_REQUEST,
            unsaved=("Unsaved changes on two records", ex.DRY_RUN_UNSAVED_REQUEST),
        ),
    ] = None,
) -> flow_runs.DryRunAnswer:
    request = body or flow_runs.DryRunRequest()
    seen_by = None
    if request.runner is None and request.runner_id is not None:
        from etikett.domain.deployments.views import as_runner_sees  # dry runs of a Runner only

        seen_by = as_runner_sees(flowId, request.runner_id)
    return flow_runs.dry_run(flowId, request, seen_by)


@routes.get(
    "/flows/{flowId}/runs",
    operation_id="listFlowRuns",
    response_model=ItemList[flow_runs.FlowRun],
    summary="List the recorded runs of a flow, newest first",
    description="Runs are recorded where the flow runs (Runners report theirs); dry runs are "
    "answered, not recorded.",
    responses=_NOT_FOUND,
)
def list_runs(
    flowId: str,
    invocation: Anyone,
    deployment_id: Filter = None,
    runner_id: Filter = None,
    outcome: Literal["succeeded", "failed", "partial"] | None = None,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
) -> Any:
    page = flow_runs.list_runs(
        flowId,
        deployment_id=deployment_id,
        runner_id=runner_id,
        outcome=outcome,
        limit=limit,
        cursor=cursor,
    )
    return ItemList[flow_runs.FlowRun].of(page)
