"""Routes of the Runners and enrollment group, and jobs (getJob, postJobCancel)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Header, Path, Query, Request, Response

from etikett.api.access import (
    any_caller,
    enrollment_reader,
    enrollment_token,
    requires,
)
from etikett.api.context_bounds import CONTEXT_BOUNDS
from etikett.api.pagination import DEFAULT, Cursor, Filter, ItemList, Limit
from etikett.api.routing import Responses, not_in_mcp, router
from etikett.domain.actors import Invocation
from etikett.domain.agent import discovery
from etikett.domain.printing import jobs, raw_jobs
from etikett.domain.runners import installers, runner_enrollment, runners
from etikett_engine.errors import ProblemCode, Unauthenticated

routes = router(prefix="/api/v1", tags=["Runners and enrollment"])

Admin = Annotated[Invocation, requires("admin")]
# What makes a Runner (an identity that receives flows and their secrets): a person only, never
# a token or MCP, so that no agent can enroll a Runner of its own (issue 23).
AdminPerson = Annotated[Invocation, requires("admin", human=True)]
Operator = Annotated[Invocation, requires("operator")]
RunnerReader = Annotated[Invocation, requires("operator", "approver", "designer")]
ContextReader = Annotated[Invocation, requires("operator", "designer")]
ContextName = Annotated[
    str,
    Path(pattern=runners.CONTEXT_NAME, description="Letters, digits, _ . -; up to 64 characters."),
]
_GROUP_404: Responses = {404: {"description": "Unknown group (`runner_group.not_found`)"}}
_RUNNER_404: Responses = {404: {"description": "Unknown Runner (`runner.not_found`)"}}


def _context_routes(base: str, owner: str, kind: str, level: str, not_found: Responses) -> None:
    """The context parameters of a group or of a Runner: list, set and remove (one definition
    for both levels; `owner` is the path parameter naming the group or the Runner)."""
    # A default rather than an Annotated alias (keyword-only, so that it may come first): the
    # module's annotations are strings, resolved against its globals, where no per-call alias is.
    owner_path = Path(alias=owner)

    @routes.get(
        f"{base}/context",
        operation_id=f"get{kind}Context",
        response_model=ItemList[runners.ContextParameter],
        summary=f"{level[0].upper()}{level[1:]}-level context parameters",
        responses=not_found,
    )
    def list_context(
        *,
        owner_id: str = owner_path,
        invocation: ContextReader,
        limit: Limit = DEFAULT,
        cursor: Cursor = None,
    ) -> ItemList[runners.ContextParameter]:
        return ItemList[runners.ContextParameter].of(runners.list_context(owner_id, limit, cursor))

    @routes.put(
        f"{base}/context/{{name}}",
        operation_id=f"put{kind}ContextParameter",
        response_model=runners.ContextParameter,
        summary=f"Set a {level}-level context parameter",
        responses={**not_found, **CONTEXT_BOUNDS},
    )
    def put_context(
        *,
        owner_id: str = owner_path,
        name: ContextName,
        body: runners.ContextValue,
        invocation: Operator,
    ) -> runners.ContextParameter:
        return runners.put_context(invocation, owner_id, name, body)

    @routes.delete(
        f"{base}/context/{{name}}",
        operation_id=f"delete{kind}ContextParameter",
        status_code=204,
        summary=f"Remove a {level}-level context parameter",
        responses=not_found,
    )
    def delete_context(*, owner_id: str = owner_path, name: str, invocation: Operator) -> Response:
        runners.delete_context(invocation, owner_id, name)
        return Response(status_code=204)


# --- groups ----------------------------------------------------------------------------------


@routes.get(
    "/runner-groups",
    operation_id="listRunnerGroups",
    response_model=ItemList[runners.RunnerGroup],
    summary="List Runner groups by name",
)
def list_groups(
    invocation: Annotated[Invocation, any_caller()], limit: Limit = DEFAULT, cursor: Cursor = None
) -> ItemList[runners.RunnerGroup]:
    return ItemList[runners.RunnerGroup].of(runners.list_groups(limit, cursor))


@routes.post(
    "/runner-groups",
    operation_id="createRunnerGroup",
    response_model=runners.RunnerGroup,
    status_code=201,
    summary="Create a Runner group (a site or line whose Runners share work)",
)
def create_group(body: runners.NewRunnerGroup, invocation: Admin) -> runners.RunnerGroup:
    return runners.create_group(invocation, body)


@routes.put(
    "/runner-groups/{groupId}/printer-ports",
    operation_id="putRunnerGroupPrinterPorts",
    response_model=runners.RunnerGroup,
    summary="Allow the group's printers ports besides 9100, 6101 and 515",
    description="Printers (and discovery targets) of the group's Runners may use these ports "
    "too, on private or link-local addresses only. The whole list is replaced; audited.",
    responses=_GROUP_404,
)
def put_printer_ports(
    groupId: str, body: runners.PrinterPorts, invocation: Admin
) -> runners.RunnerGroup:
    return runners.set_printer_ports(invocation, groupId, body)


@routes.post(
    "/runner-groups/{groupId}/enrollment-tokens",
    operation_id="createEnrollmentToken",
    response_model=runner_enrollment.IssuedEnrollmentToken,
    status_code=201,
    summary="Issue a one-time enrollment token for a new Runner of the group",
    description="Only an admin signed in with a session (a person) may; a token or MCP call is "
    "refused with `auth.human_required`.",
    responses=_GROUP_404,
    openapi_extra=not_in_mcp(),
)
def create_token(
    groupId: str,
    body: runner_enrollment.NewEnrollmentToken,
    invocation: AdminPerson,
) -> runner_enrollment.IssuedEnrollmentToken:
    return runner_enrollment.issue_token(invocation, groupId, body)


@routes.post(
    "/runner-groups/{groupId}/installer",
    operation_id="postRunnerGroupInstaller",
    response_model=installers.Installer,
    status_code=201,
    summary="Build an installer (Linux and Windows) for a new Runner of the group",
    description="A zip with the Runner package, its configuration (server URL, CA "
    "bundle), a fresh enrollment token and install scripts; answered as a "
    "presigned download URL. Only an admin signed in with a session (a person) may.",
    responses=_GROUP_404,
    openapi_extra=not_in_mcp(),
)
def create_installer(
    groupId: str,
    request: Request,
    invocation: AdminPerson,
    body: installers.InstallerRequest | None = None,
) -> installers.Installer:
    return installers.build(
        invocation,
        groupId,
        body or installers.InstallerRequest(),
        str(request.base_url).rstrip("/"),
    )


_context_routes("/runner-groups/{groupId}", "groupId", "RunnerGroup", "group", _GROUP_404)


# --- enrollment ------------------------------------------------------------------------------


@routes.post(
    "/runner-enrollments",
    operation_id="createRunnerEnrollment",
    response_model=runner_enrollment.EnrollmentCreated,
    status_code=201,
    summary="Runner bootstrap: exchange an enrollment token and a CSR for a certificate",
    description="Authorization: Bearer <enrollment token>. Answers the certificate at "
    "once, or `pending` when the token needs approval (poll "
    "getRunnerEnrollment with X-Enrollment-Secret).",
    responses={401: {"description": "`enrollment.token_invalid`, `.token_used`, `.token_expired`"}},
    openapi_extra=not_in_mcp(),
)
def enroll(
    body: runner_enrollment.EnrollmentRequest,
    invocation: Annotated[Invocation, enrollment_token()],
    authorization: Annotated[str | None, Header()] = None,
) -> runner_enrollment.EnrollmentCreated:
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthenticated(
            "Present the enrollment token as `Authorization: Bearer etkr_…`.",
            ProblemCode.ENROLLMENT_TOKEN_INVALID,
        )
    return runner_enrollment.enroll(invocation, token.strip(), body)


@routes.get(
    "/runner-enrollments",
    operation_id="listRunnerEnrollments",
    response_model=ItemList[runner_enrollment.Enrollment],
    summary="Enrollments, newest first (`?status=pending` for those awaiting approval)",
)
def list_enrollments(
    invocation: Annotated[Invocation, requires("admin", "operator")],
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
    status: Annotated[str | None, Query(pattern="^(pending|approved)$")] = None,
) -> ItemList[runner_enrollment.Enrollment]:
    page = runner_enrollment.list_enrollments(limit, cursor, status)
    return ItemList[runner_enrollment.Enrollment].of(page)


@routes.get(
    "/runner-enrollments/{id}",
    operation_id="getRunnerEnrollment",
    response_model=runner_enrollment.Enrollment,
    summary="State of one enrollment",
    responses={404: {"description": "Unknown enrollment (`enrollment.not_found`)"}},
)
def get_enrollment(
    id: str,
    invocation: Annotated[Invocation, enrollment_reader()],
    x_enrollment_secret: Annotated[str | None, Header()] = None,
) -> runner_enrollment.Enrollment:
    if invocation.caller is None and x_enrollment_secret:
        return runner_enrollment.get_with_secret(id, x_enrollment_secret)
    return runner_enrollment.get(id)


@routes.post(
    "/runner-enrollments/{id}/approval",
    operation_id="postRunnerEnrollmentApproval",
    response_model=runner_enrollment.Enrollment,
    summary="Approve a waiting enrollment: the Runner gets its certificate",
    description="Only an admin signed in with a session (a person) may.",
    responses={404: {"description": "Unknown enrollment (`enrollment.not_found`)"}},
    openapi_extra=not_in_mcp(),
)
def approve_enrollment(id: str, invocation: AdminPerson) -> runner_enrollment.Enrollment:
    return runner_enrollment.approve(invocation, id)


# --- runners ---------------------------------------------------------------------------------


@routes.get(
    "/runners",
    operation_id="listRunners",
    response_model=ItemList[runners.Runner],
    summary="List Runners with their status (online, offline, pending) and last contact",
)
def list_runners(
    invocation: RunnerReader,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
    group_id: Filter = None,
) -> ItemList[runners.Runner]:
    return ItemList[runners.Runner].of(runners.list_runners(limit, cursor, group_id))


@routes.get(
    "/runners/{runnerId}",
    operation_id="getRunner",
    response_model=runners.Runner,
    summary="One Runner: status, last contact, version, host",
    responses=_RUNNER_404,
)
def get_runner(runnerId: str, invocation: RunnerReader) -> runners.Runner:
    return runners.get_runner(runnerId)


@routes.delete(
    "/runners/{runnerId}",
    operation_id="deleteRunner",
    status_code=204,
    summary="Remove a Runner: its certificate is refused from now on",
    responses=_RUNNER_404,
)
def delete_runner(runnerId: str, invocation: Admin) -> Response:
    runners.remove_runner(invocation, runnerId)
    jobs.end_open_jobs_of(runnerId)  # nobody will run them now
    return Response(status_code=204)


@routes.post(
    "/runners/{runnerId}/discovery",
    operation_id="postRunnerDiscovery",
    response_model=jobs.Job,
    status_code=202,
    summary="Search for printers on the Runner's network",
    description="Probes each target (port 9100 by default) with ~HI/~HS; the job's "
    "result (getJob) lists findings to adopt with createPrinter, and so does "
    "listRunnerDiscoveryFindings. Targets are private or link-local "
    "addresses (or names) on printer ports; a Runner discovers at most three times at once, "
    "then once every 20 s.",
    responses={
        **_RUNNER_404,
        422: {
            "description": "Invalid request (`request.invalid`, params.fields names each "
            "field); a target the Runner may not probe (`printer.address_refused`)"
        },
        429: {"description": "The Runner discovered a moment ago (`runner.discovery_throttled`)"},
    },
)
def discover(
    runnerId: str,
    body: discovery.DiscoveryRequest,
    invocation: Operator,
) -> jobs.Job:
    return discovery.discover_at(invocation, runnerId, body)


@routes.post(
    "/runners/{runnerId}/jobs",
    operation_id="createRunnerJob",
    response_model=jobs.Job,
    status_code=202,
    summary="Hand a raw print job (printer-language bytes) to a Runner",
    description="The bytes must be in the printer's language as that language frames them "
    "(ZPL ^XA…^XZ with ~ and SGD ! U1 commands, TSPL, EPL2); anything else is refused.",
    responses={
        **_RUNNER_404,
        422: {
            "description": "Invalid request (`request.invalid`, params.fields names each "
            "field); not printer-language data (`job.not_printer_data`)"
        },
    },
)
def create_job(runnerId: str, body: raw_jobs.RawJobRequest, invocation: Operator) -> jobs.Job:
    return raw_jobs.submit_raw(invocation, runnerId, body)


@routes.get(
    "/runners/{runnerId}/jobs",
    operation_id="listRunnerJobs",
    response_model=ItemList[jobs.Job],
    summary="Jobs of a Runner, newest first",
    responses=_RUNNER_404,
)
def list_jobs(
    runnerId: str,
    invocation: Operator,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
) -> ItemList[jobs.Job]:
    return ItemList[jobs.Job].of(jobs.list_for_runner(runnerId, limit, cursor))


@routes.get(
    "/runners/{runnerId}/discovery/findings",
    operation_id="listRunnerDiscoveryFindings",
    response_model=ItemList[discovery.Finding],
    summary="Printers the Runner's discoveries found, newest first",
    description="Each finding's `id` is the `finding_id` that createPrinter adopts "
    '(`{"finding_id", "name"}`). Findings are kept a week; the discovery job\'s result '
    "(getJob) lists the same findings of that one job.",
    responses=_RUNNER_404,
)
def list_discovery_findings(
    runnerId: str,
    invocation: Operator,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
) -> ItemList[discovery.Finding]:
    return ItemList[discovery.Finding].of(discovery.list_findings(runnerId, limit, cursor))


_context_routes("/runners/{runnerId}", "runnerId", "Runner", "Runner", _RUNNER_404)


# --- jobs ------------------------------------------------------------------------------------


@routes.get(
    "/jobs/{jobId}",
    operation_id="getJob",
    response_model=jobs.Job,
    summary="A job with its message history and outcome",
    responses={404: {"description": "Unknown job (`job.not_found`)"}},
)
def get_job(
    jobId: str,
    invocation: Annotated[Invocation, requires("operator", "designer", "approver")],
) -> jobs.Job:
    return jobs.get(jobId)


@routes.post(
    "/jobs/{jobId}/cancel",
    operation_id="postJobCancel",
    response_model=jobs.Job,
    summary="Cancel a job whose bytes have not reached a printer",
    responses={
        404: {"description": "Unknown job (`job.not_found`)"},
        409: {"description": "Already sent (`job.not_cancellable`)"},
    },
)
def cancel_job(jobId: str, invocation: Operator) -> jobs.Job:
    return jobs.cancel(invocation, jobId)
