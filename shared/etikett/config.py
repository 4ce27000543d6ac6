"""Settings read from the environment that the template (or local mode) gives each function."""

from __future__ import annotations

import os
from functools import cache


def env(name: str, default: str | None = None) -> str:
    value = os.environ.get(name, default)
    if value is None:
        raise RuntimeError(f"environment variable {name} is not set (see template.yaml Globals)")
    return value


def region() -> str:
    return os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "eu-central-1"


def dynamodb_endpoint() -> str | None:
    """Local mode and tests point at moto's server; on AWS this is None."""
    return os.environ.get("AWS_ENDPOINT_URL_DYNAMODB") or os.environ.get("AWS_ENDPOINT_URL")


def session_ttl_seconds() -> int:
    return int(os.environ.get("ETIKETT_SESSION_TTL_SECONDS", "43200"))


@cache
def build() -> str:
    return os.environ.get("ETIKETT_BUILD", "local")


def agent_url() -> str | None:
    """The agent channel's mutual-TLS URL that enrollment hands to Runners (local mode: the
    local gateway's verifying HTTPS port; on AWS: the custom domain with the truststore)."""
    return os.environ.get("ETIKETT_AGENT_URL") or None
