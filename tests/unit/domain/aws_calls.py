"""The AWS operations a piece of code calls, in order: how many round trips it costs."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.client import BaseClient


def recorded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """A list that every AWS call from now on (for the rest of the test) appends its name to."""
    calls: list[str] = []
    original = BaseClient._make_api_call

    def counted(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        calls.append(operation)
        return original(client, operation, params)

    monkeypatch.setattr(BaseClient, "_make_api_call", counted)
    return calls
