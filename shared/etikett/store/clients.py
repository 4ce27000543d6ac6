"""boto3 clients, made once per process: creating a client costs tens of milliseconds, far more
than the calls most requests make with it."""

from __future__ import annotations

from functools import cache
from typing import Any, cast

from etikett.settings import get_settings


@cache
def client(service: str) -> Any:
    # Loaded here, not at the cold start of eleven functions (credentials, deployments, …).
    import boto3

    session = boto3.session.Session()
    return session.client(cast(Any, service), region_name=get_settings().region)
