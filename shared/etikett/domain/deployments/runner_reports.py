"""What a Runner reports of a deployment over the agent channel (applying, active or failed):
apart from the deployment's own models, which the agent channel does not need."""

from typing import Literal

from pydantic import ConfigDict, Field

from etikett_engine.model import Model


class RunnerReport(Model):
    model_config = ConfigDict(extra="forbid")
    status: Literal["applying", "active", "failed"]
    detail: str | None = Field(default=None, max_length=2000)
