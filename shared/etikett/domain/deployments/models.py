"""What a deployment is to its callers: the requests, the deployment with its stages and Runner
states, and the statuses they go through.
"""

from typing import Any, Literal, Self

from pydantic import ConfigDict, Field, model_validator

from etikett_engine.model import Model

DeploymentStatus = Literal[
    "awaiting_approval", "rolling_out", "active", "failed", "rolled_back", "superseded"
]
StageStatus = Literal[
    "pending", "awaiting_approval", "rolling_out", "active", "failed", "rolled_back"
]
RunnerStatus = Literal["pending", "applying", "active", "failed"]
# A deployment is created and changed in one transaction (at most 100 items): its groups and
# the printers its aliases name are bounded so that it always fits.
MAX_GROUPS = 50
MAX_PRINTERS = 20
APPROVED = ("rolling_out", "active", "failed")


class OfflinePolicy(Model):
    """Whether the deployment's Runners may print without the service, and within which bounds
    (docs/concepts/offline-sites.md). Off unless set."""

    # Strict: "yes" or "8" are mistakes here, not values to guess at.
    model_config = ConfigDict(extra="forbid", strict=True)
    allowed: bool = Field(
        default=False, description="Runners print on site while the service is unreachable."
    )
    max_hours: int = Field(
        default=8,
        ge=1,
        le=168,
        description="Hours after losing the service within which a Runner prints offline; "
        "records after that wait for the service.",
    )
    max_labels: int = Field(
        default=1000,
        ge=1,
        le=100_000,
        description="Labels a Runner prints offline before syncing; further records wait.",
    )
    counter_block_size: int = Field(
        default=100,
        ge=1,
        le=10_000,
        description="Values a Runner reserves per counter block for offline prints.",
    )


class StageIn(Model):
    model_config = ConfigDict(extra="forbid")
    group_ids: list[str] = Field(min_length=1, max_length=20, description="Runner groups (rgp_…).")


class NewDeployment(Model):
    model_config = ConfigDict(extra="forbid")
    flow_id: str
    version: int = Field(ge=1)
    stages: list[StageIn] = Field(
        min_length=1,
        max_length=10,
        description="Rolled out in order; each stage waits for its own approval.",
        examples=[[{"group_ids": ["rgp_01J8Z7Q4X9V3M2N5P6R7S8T9U0"]}]],
    )
    printers: dict[str, str] = Field(
        default_factory=dict,
        max_length=50,
        description="Printer alias (as the flow's action.print names it) → printer id.",
    )
    context: dict[str, Any] = Field(
        default_factory=dict, max_length=100, description="Deployment-level context parameters."
    )
    offline: OfflinePolicy = Field(
        default_factory=OfflinePolicy,
        description="Offline printing: off unless allowed here (putDeploymentOfflinePolicy).",
    )

    @model_validator(mode="after")
    def _fits_one_change(self) -> Self:
        groups = sum(len(stage.group_ids) for stage in self.stages)
        if groups > MAX_GROUPS:
            raise ValueError(f"{groups} groups in all stages; at most {MAX_GROUPS}")
        if len(set(self.printers.values())) > MAX_PRINTERS:
            raise ValueError(f"at most {MAX_PRINTERS} distinct printers per deployment")
        return self


class RunnerState(Model):
    runner_id: str
    status: RunnerStatus
    detail: str | None = None


class Stage(Model):
    index: int
    group_ids: list[str]
    status: StageStatus
    approved_by: str | None = None
    approved_at: str | None = None
    changed_since_approval: bool = Field(
        default=False,
        description="Approved, and the deployment's context or printer aliases changed since.",
    )
    changes_await_approval: bool = Field(
        default=False,
        description="Its Runners keep the context and printers they ran until the stage is "
        "approved again (policy deploymentChangesNeedApproval).",
    )
    runners: list[RunnerState]


class Author(Model):
    actor: Literal["human", "service"]
    subject: str


class Deployment(Model):
    id: str
    flow_id: str
    version: int
    status: DeploymentStatus
    stages: list[Stage]
    changed_since_approval: bool = Field(
        default=False,
        description="A stage's context or printer aliases changed after it was approved.",
    )
    offline: OfflinePolicy
    author: Author
    created_at: str
    updated_at: str


class Approval(Model):
    model_config = ConfigDict(extra="forbid")
    stage: int = Field(
        ge=0,
        le=100,
        description="The index of the stage awaiting approval (or of an approved one changed "
        "since its approval).",
    )
    comment: str | None = Field(default=None, max_length=1000)


class Rollback(Model):
    model_config = ConfigDict(extra="forbid")
    comment: str | None = Field(default=None, max_length=1000)


class PrinterAssignment(Model):
    model_config = ConfigDict(extra="forbid")
    printer_id: str = Field(description="The printer this alias prints to.")
    by_runner: dict[str, str] = Field(
        default_factory=dict,
        max_length=200,
        description="Runner id → printer id, for Runners that print to another printer.",
    )


class AssignedPrinter(PrinterAssignment):
    alias: str


class ContextParameter(Model):
    name: str
    value: Any
    updated_at: str
    updated_by: str
