"""The agent channel: what Runners call, authenticated by their client certificate."""

from __future__ import annotations

from typing import Annotated

from fastapi import Request

from etikett.api.access import runner_certificate
from etikett.api.routing import not_in_mcp, router
from etikett.domain import jobs, runner_agent
from etikett.domain.actors import Invocation

routes = router(prefix="/api/v1/runner-agent", tags=["Runner agent channel"])
RunnerCall = Annotated[Invocation, runner_certificate()]
_HIDDEN = not_in_mcp()


@routes.post(
    "/heartbeat",
    operation_id="postRunnerHeartbeat",
    response_model=runner_agent.HeartbeatAnswer,
    openapi_extra=_HIDDEN,
    summary="The Runner is alive; reports its host, version and printer states",
)
def heartbeat(
    body: runner_agent.Heartbeat, request: Request, invocation: RunnerCall
) -> runner_agent.HeartbeatAnswer:
    return runner_agent.heartbeat(request.state.runner, body)


@routes.post(
    "/jobs/claim",
    operation_id="postRunnerJobClaim",
    response_model=runner_agent.Claimed,
    openapi_extra=_HIDDEN,
    summary="Long-poll the Runner's job queue",
)
def claim(
    body: runner_agent.ClaimRequest, request: Request, invocation: RunnerCall
) -> runner_agent.Claimed:
    return runner_agent.claim(request.state.runner, body)


@routes.post(
    "/jobs/{jobId}/report",
    operation_id="postRunnerJobReport",
    response_model=jobs.Job,
    openapi_extra=_HIDDEN,
    summary="Report messages and the outcome of a job",
)
def report(
    jobId: str,
    body: runner_agent.JobReport,
    request: Request,
    invocation: RunnerCall,
) -> jobs.Job:
    return runner_agent.report(invocation, request.state.runner, jobId, body)


@routes.get(
    "/config",
    operation_id="getRunnerConfig",
    response_model=runner_agent.RunnerConfig,
    openapi_extra=_HIDDEN,
    summary="The Runner's effective configuration: merged context, its printers",
)
def configuration(request: Request, invocation: RunnerCall) -> runner_agent.RunnerConfig:
    return runner_agent.configuration(request.state.runner)
