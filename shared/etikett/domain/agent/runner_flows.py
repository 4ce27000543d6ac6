"""What a Runner needs to run deployed flows, over the agent channel: the flows its group is to
run (document, effective context, printer aliases), its progress reports, its runs, and its
prints — which go through the ordinary print path, so a flow prints exactly as the API does."""

import logging
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field

from etikett.domain import deployments
from etikett.domain.actors import Caller, Invocation
from etikett.domain.counters.counter_values import referenced
from etikett.domain.deployments import bundles
from etikett.domain.flows.flow_run_view import FlowRun
from etikett.domain.printers import printer_records
from etikett.domain.printing.print_limits import MAX_RECORDS
from etikett.domain.runners import runner_context
from etikett.store.runners import RunnerRecord
from etikett_engine.errors import Conflict, EtikettError, Forbidden, NotFound, ProblemCode
from etikett_engine.model import Model

if TYPE_CHECKING:
    from etikett.store import deployments as deployment_store

log = logging.getLogger(__name__)


class DeployedFlow(Model):
    deployment_id: str
    flow_id: str
    version: int
    document: dict[str, Any]
    context: dict[str, Any] = Field(description="Effective: deployment < group < Runner.")
    printers: dict[str, str] = Field(description="Alias → the printer's name.")
    problems: list[str] = Field(
        default_factory=list,
        description="Why this flow cannot run here (a printer, a credential or the version is "
        "gone): the Runner starts nothing of it and reports the deployment `failed` with these "
        "reasons.",
    )
    credentials: dict[str, str] = Field(
        default_factory=dict,
        description="Ref → value of each `secret` credential the flow's action.http nodes send "
        "and its trigger.http nodes require: sent only to Runners of the groups the deployment "
        "runs on, held in memory there; never for a flow that sends it to an origin it does not "
        "name.",
        json_schema_extra={"writeOnly": True},
    )
    bundle: dict[str, str] | None = Field(
        default=None,
        description="The deployment's signed bundle (deployments/bundles.py): the flow version, "
        "its context and printer aliases and the approved label versions it prints, which the "
        "Runner verifies, keeps in its state directory and runs from.",
    )
    credential_origins: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Ref → the origins a secret may be sent to; the Runner's HTTP node refuses "
        "to send it anywhere else (`credential.origin_refused`). A ref not here names none.",
    )


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
    records: list[dict[str, Any]] = Field(min_length=1, max_length=MAX_RECORDS)
    idempotency_key: str = Field(min_length=1, max_length=200)


def _targets(runner: RunnerRecord) -> "list[deployment_store.GroupFlowRecord]":
    # The deployments' tables load with the flow requests, not with every heartbeat.
    from etikett.store import deployments as deployment_store

    return deployment_store.group_flows(runner.group_id)


def deployed_flows(runner: RunnerRecord) -> list[DeployedFlow]:
    """Every flow the Runner's group is to run. Something one flow needs that is gone (its
    version, an assigned printer) fails that flow alone, with the reason, never the answer."""
    # Loaded here, not at the mcp and runner_agent functions' cold start.
    from etikett.domain.flows import flows
    from etikett.store import deployments as deployment_store

    group_context = runner_context.context_values(runner.group_id)
    own_context = runner_context.context_values(runner.id)
    answer = []
    for target in _targets(runner):
        record = deployment_store.get(target.deployment_id)
        if record is None:
            continue
        problems: list[str] = []
        document: dict[str, Any] = {"nodes": []}
        try:
            document = flows.load_version(target.flow_id, int(target.version)).document
        except NotFound:
            problems.append(f"version {target.version} of {target.flow_id} no longer exists")
        deployed_context, printers = deployments.running(record, runner.group_id)
        names = {}
        for alias in printers:
            printer_id = deployments.printer_in(printers, alias, runner.id)
            if printer_id is None:
                continue
            try:
                names[alias] = printer_records.load(printer_id).name
            except NotFound:
                problems.append(
                    f"the printer {printer_id} assigned to the alias {alias!r} in {record.id} "
                    "was deleted; assign another (putDeploymentPrinter)"
                )
        secrets, origins = _secrets(document, problems)
        context = {**deployed_context, **group_context, **own_context}
        bundle = None
        if not problems:
            labels, offline = bundles.printable_labels(document)
            bundle = bundles.sign(
                {
                    "deployment_id": record.id,
                    "runner_id": runner.id,
                    "flow_id": target.flow_id,
                    "version": int(target.version),
                    "document": document,
                    "context": context,
                    "printers": names,
                    "labels": labels,
                    "not_offline": offline,
                    "offline": deployments.offline_policy(record).model_dump(),
                }
            )
        answer.append(
            DeployedFlow(
                deployment_id=record.id,
                flow_id=target.flow_id,
                version=int(target.version),
                document=document,
                context=context,
                printers=names,
                problems=problems,
                bundle=bundle,
                credentials=secrets,
                credential_origins=origins,
            )
        )
    return answer


# The node fields that name a `secret` credential: sent by action.http, required by
# trigger.http from its callers.
SECRET_FIELDS = {"action.http": "credential", "trigger.http": "secret"}


def secret_refs(document: dict[str, Any]) -> list[str]:
    """Every `secret` credential the flow's nodes name."""
    return sorted(
        {
            node[SECRET_FIELDS[node["type"]]]
            for node in document.get("nodes") or []
            if isinstance(node, dict)
            and node.get("type") in SECRET_FIELDS
            and isinstance(node.get(SECRET_FIELDS[node["type"]]), str)
        }
    )


def _secrets(
    document: dict[str, Any], problems: list[str]
) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The secrets the flow's nodes name, opened for this answer only, with the origins each
    may be sent to. What cannot be given is a problem of this flow (never with the secret in
    it): a secret that an action.http would send to an origin it does not name is withheld."""
    # Loaded here, not at the runner_agent function's cold start.
    from etikett.domain.credentials import opening
    from etikett_engine.dsl.flow import FlowDocument
    from etikett_engine.flows.secret_origins import sending_refused, sends

    try:
        sent = list(sends(FlowDocument.model_validate(document)))
    except ValueError:
        sent = []  # a version that no longer parses fails on its own
    opened: dict[str, str] = {}
    allowed: dict[str, list[str]] = {}
    for ref in secret_refs(document):
        try:
            value, origins = opening.secret_with_origins(ref)
        except NotFound:
            problems.append(f"the credential {ref!r} does not exist; an admin creates it")
            continue
        except EtikettError:
            problems.append(f"the credential {ref!r} is a language model, not a secret")
            continue
        except Exception as error:  # KMS away, a damaged item: this flow waits, not the others
            log.warning(
                "credential %r cannot be opened for a Runner: %s", ref, type(error).__name__
            )
            problems.append(f"the credential {ref!r} cannot be opened now; tried again shortly")
            continue
        refused = [
            f"the credential {ref!r} is not sent to node {node_id!r}'s URL: {why}"
            for _, node_id, named, url in sent
            if named == ref and (why := sending_refused(url, origins)) is not None
        ]
        if refused:
            problems.extend(refused)
            continue
        opened[ref] = value
        if origins is not None:
            allowed[ref] = list(origins)
    return opened, allowed


def _deployment_for(
    runner: RunnerRecord, deployment_id: str
) -> "deployment_store.DeploymentRecord":
    record = deployments.load(deployment_id)
    groups = {g for stage in record.stages for g in stage["group_ids"]}
    if runner.group_id not in groups:
        raise Forbidden(
            f"{deployment_id} does not deploy to this Runner's group.",
            ProblemCode.AUTH_FORBIDDEN,
            deployment_id=deployment_id,
        )
    return record


def report(
    runner: RunnerRecord,
    deployment_id: str,
    request: deployments.RunnerReport,
    invocation: Invocation | None = None,
) -> None:
    _deployment_for(runner, deployment_id)
    deployments.report(runner, deployment_id, request, invocation)


def record_run(runner: RunnerRecord, request: FlowRunReport) -> FlowRun:
    # The flow modules load with the flow requests that need them, not with every heartbeat.
    from etikett.domain.flows import flow_runs

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


def runs_in_group(runner: RunnerRecord, record: "deployment_store.DeploymentRecord") -> bool:
    """Whether the Runner's group runs the deployment now: the group's stage was approved
    (rolling out, active, or failed while Runners retry) and the deployment was neither rolled
    back nor superseded — or, while a newer deployment of the flow rolls out in the group, it is
    the one that replaces, so that runs under way finish."""
    # Loaded here, not at the mcp and runner_agent functions' cold start.
    from etikett.store import deployments as deployment_store

    target = deployment_store.group_flow(runner.group_id, record.flow_id)
    current = {target.deployment_id, target.previous_deployment_id} if target else set()
    return record.status not in deployment_store.ENDED and record.id in current


def _refuse_unless_running(
    runner: RunnerRecord, record: "deployment_store.DeploymentRecord"
) -> None:
    """A Runner prints for a deployment only while its group runs it (`runs_in_group`)."""
    if runs_in_group(runner, record):
        return
    raise Forbidden(
        f"{record.id} does not run in this Runner's group now (its stage is not approved, or "
        f"it is {record.status}); its prints are refused.",
        ProblemCode.RUNNER_DEPLOYMENT_NOT_RUNNING,
        deployment_id=record.id,
        status=record.status,
    ).audited_as(record.id)


@lru_cache(maxsize=256)
def print_targets(flow_id: str, version: int) -> frozenset[tuple[str, str]]:
    """(label reference as written, printer alias) of each action.print of a flow version
    (versions never change: read once per process)."""
    # Loaded here, not at the runner_agent function's cold start.
    from etikett.domain.flows import flows

    nodes = flows.load_version(flow_id, version).document.get("nodes") or []
    return frozenset(
        (str(node.get("label")), str(node.get("printer")))
        for node in nodes
        if isinstance(node, dict) and node.get("type") == "action.print"
    )


def print_records(runner: RunnerRecord, request: FlowPrint) -> dict[str, Any]:
    """One print request as an operator would send it, by the Runner (a service actor): only
    for a deployment its group runs, and only labels and aliases the deployed version prints."""
    # Loaded here, not at the runner_agent function's cold start.
    from etikett.domain.printing import printing

    record = _deployment_for(runner, request.deployment_id)
    _refuse_unless_running(runner, record)
    if (request.label, request.printer) not in print_targets(record.flow_id, int(record.version)):
        raise Forbidden(
            f"Version {record.version} of {record.flow_id} prints no {request.label} to the "
            f"alias {request.printer!r}; a Runner prints only what its deployed flow names.",
            ProblemCode.RUNNER_PRINT_NOT_IN_FLOW,
            deployment_id=record.id,
            label=request.label,
            printer=request.printer,
        ).audited_as(record.id)
    _, printers = deployments.running(record, runner.group_id)
    printer_id = deployments.printer_in(printers, request.printer, runner.id)
    if printer_id is None:
        raise Conflict(
            f"{request.deployment_id} assigns no printer to {request.printer!r}.",
            ProblemCode.DEPLOYMENT_PRINTER_UNASSIGNED,
            alias=request.printer,
        )
    printer = printer_records.load(printer_id)
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
    return printing.print_request(invocation, body)


def counters_in_use(runner: RunnerRecord) -> set[str]:
    """The counters the labels of the flows deployed to the Runner's group read: those it may
    reserve blocks of (counter_blocks)."""
    # Loaded here, not at the runner_agent function's cold start.
    from etikett.domain.flows import flows
    from etikett_engine.dsl.label import LabelDocument

    names: set[str] = set()
    for target in _targets(runner):
        try:
            document = flows.load_version(target.flow_id, int(target.version)).document
        except NotFound:
            continue
        for label in bundles.printable_labels(document)[0]:
            names.update(referenced(LabelDocument.model_validate(label["document"]).expressions()))
    return names
