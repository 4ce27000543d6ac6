"""Dry runs of a flow version and the record of its runs.

A dry run executes the one engine on sample records with effects that perform nothing: it never
creates a job, never calls out, never writes a file and never takes a counter value. For a print
it says what would be printed: the label version, the printer alias, the resolved variables, the
copies and the counter values the labels would take (read, not taken)."""

from datetime import datetime
from typing import Annotated, Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from etikett import clock
from etikett.domain import activity
from etikett.domain.flows import flow_checks, flows
from etikett.domain.flows.flow_run_view import FlowRun as FlowRun
from etikett.domain.flows.flow_run_view import RunOutcome as RunOutcome
from etikett.store import flows as store
from etikett.store.flows import FlowRunRecord
from etikett.store.pages import Page
from etikett_engine.dsl.flow import MAX_SAMPLES, FlowDocument
from etikett_engine.errors import InvalidRequest, PayloadTooLarge, ProblemCode
from etikett_engine.flows.findings import UNRUNNABLE, Finding
from etikett_engine.flows.scope import Scope, record_fields
from etikett_engine.model import Model

FieldName = Annotated[str, Field(min_length=1, max_length=200)]
UNSAVED = Field(
    default=None,
    description="A document to use instead of a saved version: the editor's unsaved changes "
    "(svc://schema/flow; malformed: 422 `document.invalid` naming each path). Nothing is saved.",
)


class LintScope(Model):
    """The names the caller knows the flow's expressions can see; what is not given is not
    checked (a Runner's fields always are)."""

    model_config = ConfigDict(extra="forbid")
    record: list[FieldName] | None = Field(
        default=None,
        max_length=500,
        description="Fields records have as they enter a folder or HTTP trigger (e.g. those of "
        "the sample records). A read of a field no path to the node provides is a "
        "`flow.cel_name_unknown` warning.",
        examples=[["sscc", "qty", "name"]],
    )
    context: list[FieldName] | None = Field(
        default=None,
        max_length=500,
        description="The context parameters set where the flow runs (deployment, group and "
        "Runner context).",
        examples=[["hall"]],
    )


class LintRequest(Model):
    model_config = ConfigDict(extra="forbid")
    version: int | None = Field(default=None, ge=1, description="Default: the latest version.")
    document: dict[str, Any] | None = UNSAVED
    scope: LintScope | None = None

    @model_validator(mode="after")
    def _one_source(self) -> Self:
        if self.version is not None and self.document is not None:
            raise ValueError("give version or document, not both")
        return self


class LintAnswer(Model):
    version: int | None = Field(description="The version linted; null for a given `document`.")
    findings: list[Finding]
    record_fields: dict[str, list[str]] | None = Field(
        default=None,
        description="With `scope.record` (or after a schedule): node id → the fields a record "
        "may have as it enters the node, over every path to it. Nodes no trigger reaches, or "
        "whose records' fields are not known, are absent.",
        examples=[{"inbox": ["qty", "sscc"], "shape": ["qty", "sscc"], "ship": ["n", "qty"]}],
    )


_Source = tuple[int | None, FlowDocument]

# What `runner` is in a dry run given neither `runner_id` nor `runner`.
PLACEHOLDER_RUNNER = {"id": "run_dry_run", "name": "dry-run", "group_id": "rgp_dry_run"}


class RunnerIdentity(Model):
    """`runner` as a flow's expressions see it."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(min_length=1, max_length=100, examples=["run_01J8Z7Q4X9V3M2N5P6R7S8T9U0"])
    name: str = Field(min_length=1, max_length=200, examples=["Halle 3 PC"])
    group_id: str = Field(min_length=1, max_length=100, examples=["rgp_01J8Z7Q4X9V3M2N5P6R7S8T9U0"])


class DryRunRequest(Model):
    model_config = ConfigDict(extra="forbid")
    version: int | None = Field(default=None, ge=1, description="Default: the latest version.")
    document: dict[str, Any] | None = UNSAVED
    samples: list[dict[str, Any]] | None = Field(
        default=None,
        max_length=MAX_SAMPLES,
        description="Records to run; default the document's pinned `samples`.",
        examples=[[{"sscc": "00340123450000000017", "qty": "2"}]],
    )
    trigger: str | None = Field(
        default=None, description="The trigger node the samples enter; default the first one."
    )
    context: dict[str, Any] = Field(
        default_factory=dict,
        description="Context parameters the expressions see as `context` (over those of "
        "`runner_id`, if given).",
    )
    runner_id: str | None = Field(
        default=None,
        description="Run as this Runner would: `runner` is its id, name and group, `context` "
        "its effective context (the deployment of this flow to its group < group < Runner).",
        examples=["run_01J8Z7Q4X9V3M2N5P6R7S8T9U0"],
    )
    runner: RunnerIdentity | None = Field(
        default=None,
        description="`runner` as given (not with `runner_id`). Without either, expressions see "
        f"the placeholder {PLACEHOLDER_RUNNER}.",
    )

    @model_validator(mode="after")
    def _one_runner(self) -> Self:
        if self.runner_id is not None and self.runner is not None:
            raise ValueError("give runner_id or runner, not both")
        if self.version is not None and self.document is not None:
            raise ValueError("give version or document, not both")
        return self


class TraceStep(Model):
    node_id: str
    type: str
    status: Literal["executed", "skipped", "error"]
    input: Any
    output: Any
    message: str | None = None


class SideEffect(Model):
    node_id: str
    kind: Literal["print", "http", "file", "log"]
    performed: bool
    detail: dict[str, Any]


class DryRunRun(Model):
    sample_index: int
    source: dict[str, Any] = Field(description="The sample record as it entered the trigger.")
    trace: list[TraceStep]
    side_effects: list[SideEffect]
    errors: list[dict[str, Any]]


class DryRunAnswer(Model):
    version: int | None = Field(description="The version run; null for a given `document`.")
    trigger: str
    runner: RunnerIdentity = Field(description="What `runner` was in the expressions.")
    runs: list[DryRunRun]


def _document(flow_id: str, version: int | None, given: dict[str, Any] | None) -> _Source:
    """The saved version asked for, or the given (unsaved) document of the flow."""
    if given is None:
        return flows.version_document(flow_id, version)
    flows.load(flow_id)
    return None, flows.parse(given)


def lint(flow_id: str, request: LintRequest) -> LintAnswer:

    version, document = _document(flow_id, request.version, request.document)
    given = request.scope or LintScope()
    scope = Scope(
        record=None if given.record is None else frozenset(given.record),
        context=None if given.context is None else frozenset(given.context),
    )
    fields = {
        node: sorted(names)
        for node, names in record_fields(document, scope.record).items()
        if names is not None
    }
    return LintAnswer(
        version=version,
        findings=flow_checks.lint(document, scope),
        record_fields=fields or None,
    )


def dry_run(
    flow_id: str,
    request: DryRunRequest,
    seen_by: tuple[dict[str, Any], dict[str, Any]] | None = None,
) -> DryRunAnswer:
    """Runs the request's samples through the flow, side effects described, not done. With
    `request.runner_id`, `seen_by` is that Runner's identity and effective context."""
    # The engine loads with the dry runs that use it, not with every request of the flows function.
    # Loaded here, not at the flows and mcp functions' cold start.
    from etikett.domain.printing.dry_run_prints import PrintPlanner
    from etikett_engine.flows.effects import DryRun
    from etikett_engine.flows.engine import FlowProgram, RunEnv

    version, document = _document(flow_id, request.version, request.document)
    _refuse_unrunnable(flow_id, version, document)
    trigger = _trigger(document, request.trigger)
    samples = request.samples if request.samples is not None else document.samples
    program = FlowProgram.compile(document)
    effects = DryRun(PrintPlanner().describe)
    runner, context = _runner_and_context(request, seen_by)
    env = RunEnv(context=context, runner=runner, run_id=f"dry-{flow_id}@{version or 'draft'}")
    values = program.env_values(env)
    runs = []
    for index, sample in enumerate(samples):
        result = program.run_record(
            sample, trigger, effects, env=env, record_index=index, env_values=values
        )
        runs.append(
            DryRunRun(
                sample_index=index,
                source=sample,
                trace=[TraceStep(**step) for step in result.trace],
                side_effects=[SideEffect(**effect) for effect in result.side_effects],
                errors=result.errors,
            )
        )
    return DryRunAnswer(
        version=version, trigger=trigger, runner=RunnerIdentity(**runner), runs=runs
    )


def _runner_and_context(
    request: DryRunRequest, seen_by: tuple[dict[str, Any], dict[str, Any]] | None
) -> tuple[dict[str, Any], dict[str, Any]]:
    """`runner` and `context` of a dry run: a Runner's as it would see them (`seen_by`, which the
    deployments work out), one given, or the placeholder; the request's context over all."""
    if request.runner is not None:
        return request.runner.model_dump(), dict(request.context)
    if seen_by is None:
        return dict(PLACEHOLDER_RUNNER), dict(request.context)
    identity, deployed = seen_by
    return identity, {**deployed, **request.context}


def _refuse_unrunnable(flow_id: str, version: int | None, document: FlowDocument) -> None:
    """A version whose wires loop is not run at all (the engine's budget would stop each
    record, but the answer would only say so record by record)."""
    # Lint (every rule's module) loads with the first dry run, not at the flows cold start.
    from etikett_engine.flows.lint import lint

    blocking = [f for f in lint(document) if f.code in UNRUNNABLE and f.severity == "error"]
    if blocking:
        raise InvalidRequest(
            f"{f'Version {version}' if version else 'The document'} of {flow_id} cannot run: "
            f"{blocking[0].message}",
            ProblemCode.FLOW_NOT_RUNNABLE,
            flow_id=flow_id,
            version=version,
            findings=[f.model_dump() for f in blocking][:50],
        )


def _trigger(document: FlowDocument, wanted: str | None) -> str:
    triggers = [n.id for n in document.nodes if n.type.startswith("trigger.")]
    if wanted is not None:
        if wanted not in triggers:
            raise InvalidRequest.field("body.trigger", f"{wanted!r} is not a trigger node")
        return wanted
    if not triggers:
        raise InvalidRequest(
            "The flow has no trigger node, so no record can enter it.", ProblemCode.FLOW_NO_TRIGGER
        )
    return triggers[0]


# --- recorded runs -------------------------------------------------------------------------------


def _view(record: FlowRunRecord) -> FlowRun:
    return FlowRun(
        id=record.id,
        flow_id=record.flow_id,
        version=record.version,
        deployment_id=record.deployment_id,
        runner_id=record.runner_id,
        trigger={"node_id": record.trigger_node, "source": record.trigger_source},
        started_at=clock.rfc3339(record.started_at),
        finished_at=clock.rfc3339(record.finished_at),
        outcome=record.outcome,
        records=record.records,
        job_ids=list(record.job_ids),
        trace=record.trace,
    )


def list_runs(
    flow_id: str,
    *,
    deployment_id: str | None,
    runner_id: str | None,
    outcome: RunOutcome | None,
    limit: int,
    cursor: str | None,
) -> Page[FlowRun]:
    flows.load(flow_id)
    page = store.page_runs(
        flow_id,
        deployment_id=deployment_id,
        runner_id=runner_id,
        outcome=outcome,
        limit=limit,
        cursor=cursor,
    )
    return Page(items=[_view(r) for r in page.items], next_cursor=page.next_cursor)


def record_run(
    *,
    run_id: str,
    flow_id: str,
    version: int,
    trigger_node: str,
    trigger_source: str | None,
    started_at: datetime,
    finished_at: datetime,
    outcome: RunOutcome,
    records: int,
    job_ids: list[str],
    trace: Any,
    deployment_id: str | None = None,
    runner_id: str | None = None,
) -> FlowRun:
    """Records a run that happened (a Runner reports it); the same run id is recorded once."""
    record = FlowRunRecord(
        flow_id=flow_id,
        id=run_id,
        version=version,
        deployment_id=deployment_id,
        runner_id=runner_id,
        trigger_node=trigger_node,
        trigger_source=trigger_source,
        started_at=started_at,
        finished_at=finished_at,
        outcome=outcome,
        records=records,
        job_ids=tuple(job_ids),
        trace_blob=store.packed_trace(trace),
    )
    try:
        added = store.add_run(record)
    except PayloadTooLarge:
        # Its job ids and trace together exceed an item: the run counts, its trace gives way.
        note = {"truncated": True, "reason": "the run and its trace exceeded the store's limit"}
        record = record._replace(trace_blob=store.packed_trace(note))
        added = store.add_run(record)
    if not added:
        recorded = store.get_run(flow_id, run_id)
        record = recorded if recorded is not None else record
    else:
        activity.flow_run(run_id, flow_id, outcome, records, runner_id)
    return _view(record)
