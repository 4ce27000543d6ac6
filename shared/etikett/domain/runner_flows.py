"""What a Runner needs to run deployed flows, over the agent channel: the flows its group is to
run (document, effective context, printer aliases), its progress reports, its runs, and its
prints — which go through the ordinary print path, so a flow prints exactly as the API does."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from etikett.domain import deployments, flow_runs, flows, printing, runners
from etikett.domain.actors import Caller, Invocation
from etikett.errors import Conflict, Forbidden, ProblemCode
from etikett.model import Model
from etikett.store import deployments as deployment_store
from etikett.store.runners import RunnerRecord


class DeployedFlow(Model):
    deployment_id: str
    flow_id: str
    version: int
    document: dict[str, Any]
    context: dict[str, Any] = Field(description="Effective: deployment < group < Runner.")
    printers: dict[str, str] = Field(description="Alias → the printer's name.")


class FlowRunReport(Model):
    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=100, description="The Runner's run id (once).")
    deployment_id: str
    trigger: dict[str, Any] = Field(description="{node_id, source}")
    started_at: datetime
    finished_at: datetime
    outcome: Literal["succeeded", "failed", "partial"]
    records: int = Field(ge=0)
    job_ids: list[str] = Field(default_factory=list, max_length=10_000)
    trace: Any = None


class FlowPrint(Model):
    """The prints of one trigger event to one printer alias: one data-stream job."""

    model_config = ConfigDict(extra="forbid")
    deployment_id: str
    printer: str = Field(description="The alias the flow names.")
    label: str
    copies: int = Field(ge=1, le=1000)
    records: list[dict[str, Any]] = Field(min_length=1, max_length=printing.MAX_RECORDS)
    idempotency_key: str = Field(min_length=1, max_length=200)


def _targets(runner: RunnerRecord) -> list[deployment_store.GroupFlowRecord]:
    return deployment_store.group_flows(runner.group_id)


def deployed_flows(runner: RunnerRecord) -> list[DeployedFlow]:
    group_context = runners.context_values(runner.group_id)
    own_context = runners.context_values(runner.id)
    answer = []
    for target in _targets(runner):
        record = deployment_store.get(target.deployment_id)
        if record is None:
            continue
        document = flows.load_version(target.flow_id, int(target.version))
        names = {}
        for alias in record.printers:
            printer_id = deployments.printer_for(record, alias, runner.id)
            if printer_id is not None:
                from etikett.domain import printers

                names[alias] = printers.load(printer_id).name
        answer.append(
            DeployedFlow(
                deployment_id=record.id,
                flow_id=target.flow_id,
                version=int(target.version),
                document=document.document,
                context={**deployments.context_values(record), **group_context, **own_context},
                printers=names,
            )
        )
    return answer


def _deployment_for(runner: RunnerRecord, deployment_id: str) -> deployment_store.DeploymentRecord:
    record = deployments.load(deployment_id)
    groups = {g for stage in record.stages for g in stage["group_ids"]}
    if runner.group_id not in groups:
        raise Forbidden(
            f"{deployment_id} does not deploy to this Runner's group.",
            ProblemCode.AUTH_FORBIDDEN,
            deployment_id=deployment_id,
        )
    return record


def report(runner: RunnerRecord, deployment_id: str, request: deployments.RunnerReport) -> None:
    _deployment_for(runner, deployment_id)
    deployments.report(runner, deployment_id, request)


def record_run(runner: RunnerRecord, request: FlowRunReport) -> flow_runs.FlowRun:
    record = _deployment_for(runner, request.deployment_id)
    return flow_runs.record_run(
        run_id=request.id,
        flow_id=record.flow_id,
        version=int(record.version),
        trigger_node=str(request.trigger.get("node_id", "")),
        trigger_source=request.trigger.get("source"),
        started_at=request.started_at,
        finished_at=request.finished_at,
        outcome=request.outcome,
        records=request.records,
        job_ids=request.job_ids,
        trace=request.trace,
        deployment_id=record.id,
        runner_id=runner.id,
    )


def print_records(
    runner: RunnerRecord, request: FlowPrint, lambda_context: Any = None
) -> dict[str, Any]:
    """One print request as an operator would send it, by the Runner (a service actor)."""
    from etikett.domain import print_idempotency, printers

    record = _deployment_for(runner, request.deployment_id)
    printer_id = deployments.printer_for(record, request.printer, runner.id)
    if printer_id is None:
        raise Conflict(
            f"{request.deployment_id} assigns no printer to {request.printer!r}.",
            ProblemCode.DEPLOYMENT_PRINTER_UNASSIGNED,
            alias=request.printer,
        )
    printer = printers.load(printer_id)
    invocation = Invocation(
        Caller(actor="service", subject=f"runner:{runner.name}", roles=frozenset({"operator"})),
        "postRunnerFlowPrint",
    )
    body = printing.PrintRequest(
        label_id=request.label,
        printer=printer.name,
        copies=request.copies,
        data=request.records,
        idempotency_key=f"{runner.id}:{request.idempotency_key}",
    )
    return print_idempotency.submit_once(invocation, body, lambda_context)
