"""The agent channel: what Runners call, authenticated by their client certificate."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request, Response

from etikett.api.access import runner_certificate
from etikett.api.routing import not_in_mcp, router
from etikett.domain.actors import Invocation
from etikett.domain.agent import (
    claims,
    runner_agent,
    runner_flows,
    runner_messages,
    runner_queue_access,
)
from etikett.domain.counters import counter_blocks
from etikett.domain.deployments import RunnerReport
from etikett.domain.flows.flow_run_view import FlowRun
from etikett.domain.offline_sync import models as offline_prints
from etikett.domain.printing import jobs

routes = router(prefix="/api/v1/runner-agent", tags=["Runner agent channel"])
RunnerCall = Annotated[Invocation, runner_certificate()]
RunnerJobCall = Annotated[Invocation, runner_certificate(job_parameter="jobId")]
# A claim's writes, and an online Runner's beat, check the Runner (active, this certificate)
# themselves: no read first.
RunnerClaimCall = Annotated[Invocation, runner_certificate(checked_in_write=True)]
_HIDDEN = not_in_mcp()


@routes.post(
    "/heartbeat",
    operation_id="postRunnerHeartbeat",
    response_model=runner_messages.HeartbeatAnswer,
    openapi_extra=_HIDDEN,
    summary="The Runner is alive; reports its host, version and printer states",
)
def heartbeat(
    body: runner_messages.Heartbeat, request: Request, invocation: RunnerClaimCall
) -> runner_messages.HeartbeatAnswer:
    return runner_agent.heartbeat(request.state.runner, body, checked=True)


@routes.post(
    "/jobs/claim",
    operation_id="postRunnerJobClaim",
    response_model=runner_messages.Claimed,
    openapi_extra=_HIDDEN,
    summary="Long-poll the Runner's job queue",
)
def claim(
    body: runner_messages.ClaimRequest, request: Request, invocation: RunnerCall
) -> runner_messages.Claimed:
    return claims.claim(request.state.runner, body)


@routes.post(
    "/queue-access",
    operation_id="postRunnerQueueAccess",
    response_model=runner_messages.QueueAccess,
    openapi_extra=_HIDDEN,
    responses={
        409: {
            "description": "The deployment hands out no queue credentials "
            "(`runner.queue_access_unavailable`): claim through `/jobs/claim`"
        }
    },
    summary="Short-lived credentials for the Runner's own queue, to long-poll it directly",
)
def queue_access(request: Request, invocation: RunnerCall) -> runner_messages.QueueAccess:
    return runner_queue_access.queue_access(request.state.runner, request.state.certificate_pem)


@routes.post(
    "/jobs/claim-received",
    operation_id="postRunnerJobClaimReceived",
    response_model=runner_messages.Claimed,
    openapi_extra=_HIDDEN,
    summary="Claim jobs the Runner received from its own queue",
)
def claim_received(
    body: runner_messages.ClaimReceived, request: Request, invocation: RunnerClaimCall
) -> runner_messages.Claimed:
    return runner_queue_access.claim_received(request.state.runner, body)


@routes.post(
    "/jobs/release",
    operation_id="postRunnerJobRelease",
    response_model=runner_messages.Released,
    openapi_extra=_HIDDEN,
    summary="A new Runner process: make jobs an earlier one claimed claimable again",
)
def release(request: Request, invocation: RunnerCall) -> runner_messages.Released:
    return claims.release(request.state.runner)


@routes.post(
    "/jobs/{jobId}/report",
    operation_id="postRunnerJobReport",
    response_model=jobs.Job,
    openapi_extra=_HIDDEN,
    responses={
        404: {"description": "No such job (`job.not_found`)"},
        409: {"description": "Contradicts the job's final outcome (`job.finished`)"},
    },
    summary="Report messages and the outcome of a job",
)
def report(
    jobId: str,
    body: runner_messages.JobReport,
    request: Request,
    invocation: RunnerJobCall,
) -> jobs.Job:
    return runner_agent.report(
        invocation, request.state.runner, jobId, body, read=request.state.job
    )


@routes.get(
    "/config",
    operation_id="getRunnerConfig",
    response_model=runner_messages.RunnerConfig,
    openapi_extra=_HIDDEN,
    summary="The Runner's effective configuration: merged context, its printers",
)
def configuration(request: Request, invocation: RunnerCall) -> runner_messages.RunnerConfig:
    return runner_agent.configuration(request.state.runner)


@routes.get(
    "/flows",
    operation_id="getRunnerFlows",
    response_model=list[runner_flows.DeployedFlow],
    openapi_extra=_HIDDEN,
    summary="The flow versions the Runner's group is to run, with context and printers",
)
def deployed_flows(request: Request, invocation: RunnerCall) -> list[runner_flows.DeployedFlow]:
    return runner_flows.deployed_flows(request.state.runner)


@routes.post(
    "/deployments/{deploymentId}/status",
    operation_id="postRunnerDeploymentStatus",
    status_code=204,
    openapi_extra=_HIDDEN,
    responses={404: {"description": "No such deployment (`deployment.not_found`)"}},
    summary="Report applying, active or failed for a deployment",
)
def deployment_status(
    deploymentId: str, body: RunnerReport, request: Request, invocation: RunnerCall
) -> Response:
    runner_flows.report(request.state.runner, deploymentId, body, invocation)
    return Response(status_code=204)


@routes.post(
    "/flow-runs",
    operation_id="postRunnerFlowRun",
    response_model=FlowRun,
    openapi_extra=_HIDDEN,
    responses={404: {"description": "No such deployment (`deployment.not_found`)"}},
    summary="Record a run of a deployed flow (once per run id)",
)
def flow_run(body: runner_flows.FlowRunReport, request: Request, invocation: RunnerCall) -> FlowRun:
    return runner_flows.record_run(request.state.runner, body)


@routes.post(
    "/counter-blocks",
    operation_id="postRunnerCounterBlock",
    response_model=counter_blocks.Block,
    openapi_extra=_HIDDEN,
    responses={
        403: {
            "description": "No label of a flow deployed to the Runner's group reads the "
            "counter (`runner.counter_not_in_flow`); refused and audited"
        },
        409: {"description": "The counter is deactivated (`counter.inactive`)"},
    },
    summary="Reserve a block of a counter's values for printing on site (idempotent by id)",
)
def counter_block(
    body: counter_blocks.BlockRequest, request: Request, invocation: RunnerCall
) -> counter_blocks.Block:
    runner = request.state.runner
    return counter_blocks.reserve(runner, body, runner_flows.counters_in_use(runner))


@routes.post(
    "/offline-prints",
    operation_id="postRunnerOfflinePrints",
    response_model=offline_prints.OfflinePrintsAnswer,
    openapi_extra=_HIDDEN,
    summary="Archive what the Runner printed while the service was away (each print once)",
    description="Each print is answered on its own: `accepted` (a finished job, one archive "
    "entry per record, the audit entry and the `print.*` webhook, all marked `printed_offline` "
    "with the Runner's print time), `already` (archived by an earlier upload: nothing is "
    "written again), or `refused` with a reason (not a deployment to the Runner's group, a "
    "label or version its flow does not print, another Runner's printer, a counter value in "
    "no block this Runner reserved). A print whose deployment no longer runs in the group is "
    "archived and flagged `deployment_not_approved`.",
)
def offline_prints_sync(
    body: offline_prints.OfflinePrintsUpload, request: Request, invocation: RunnerCall
) -> offline_prints.OfflinePrintsAnswer:
    # The sync's module loads with the uploads that need it, not with every heartbeat.
    from etikett.domain.offline_sync.sync import sync

    return sync(request.state.runner, body)


@routes.post(
    "/flow-prints",
    operation_id="postRunnerFlowPrint",
    status_code=202,
    openapi_extra=_HIDDEN,
    responses={
        403: {
            "description": "The deployment does not run in the Runner's group now "
            "(`runner.deployment_not_running`), or its flow version prints no such label to "
            "this alias (`runner.print_not_in_flow`); refused and audited"
        },
        404: {"description": "No such deployment, label or printer (`*.not_found`)"},
        409: {
            "description": "No printer for the alias (`deployment.printer_unassigned`), or the "
            "label cannot print (`print.*`)"
        },
    },
    summary="Print a trigger event's records through the print path (idempotent)",
    description="Only for a deployment the Runner's group runs (its stage approved: rolling "
    "out, active, or failed while Runners retry; not rolled back or superseded; or the one a "
    "newer deployment of the flow still rolling out there replaces), and only a label "
    "reference and printer alias that one of the deployed version's action.print nodes names.",
)
def flow_print(body: runner_flows.FlowPrint, request: Request, invocation: RunnerCall) -> Any:
    return runner_flows.print_records(request.state.runner, body)
