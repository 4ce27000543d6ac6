"""A recorded run of a flow as the API shows it, apart from `flow_runs` (dry runs, the engine),
so that the agent channel, which records runs, declares its routes without the flow engine."""

from typing import Any, Literal

from etikett_engine.model import Model

RunOutcome = Literal["succeeded", "failed", "partial"]


class FlowRun(Model):
    id: str
    flow_id: str
    version: int
    deployment_id: str | None
    runner_id: str | None
    trigger: dict[str, Any]
    started_at: str
    finished_at: str
    outcome: RunOutcome
    records: int
    job_ids: list[str]
    trace: Any
