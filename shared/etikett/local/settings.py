"""`make dev`'s own knobs: where local mode serves and keeps its state (read by local mode only,
so that no function defines them at its cold start)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class LocalSettings(BaseSettings):
    """`make dev`'s own knobs: where local mode serves and keeps its state."""

    model_config = SettingsConfigDict(env_ignore_empty=True, extra="ignore", frozen=True)

    port: int = Field(default=8000, validation_alias="PORT")
    agent_port: int | None = Field(
        default=None, validation_alias="AGENT_PORT", description="Default: port + 443."
    )
    broker_port: int | None = Field(
        default=None,
        validation_alias="BROKER_PORT",
        description="Default: port + 883. The MQTT broker where idle Runners wait for wakes.",
    )
    home: Path = Field(default=Path(".etikett"), validation_alias="ETIKETT_HOME")
    snapshot_seconds: float = Field(
        default=1.0,
        validation_alias="ETIKETT_SNAPSHOT_SECONDS",
        description="Changed local state is saved once changes pause this long (at most every "
        "30 s while they go on).",
    )
    build: str = Field(default="local", validation_alias="ETIKETT_BUILD")
    log_format: Literal["text", "json"] = Field(
        default="text",
        validation_alias="ETIKETT_LOG_FORMAT",
        description="One readable line per request and event, or JSON lines.",
    )
