"""The context parameters a Runner runs with: a group's or a Runner's own, and the effective
ones (group parameters overridden by the Runner's own; a deployment's come below both). Read by
the agent channel, deployed flows and test runs; kept apart from the Runner lookups so that
functions that only look Runners up do not load the context table."""

from __future__ import annotations

from typing import Any

from etikett.store import runner_context
from etikett.store.runners import RunnerRecord


def context_values(owner_id: str) -> dict[str, Any]:
    """A group's or a Runner's own context parameters."""
    return {record.name: record.value for record in runner_context.context_of(owner_id)}


def effective_context(runner: RunnerRecord) -> dict[str, Any]:
    """Group parameters, overridden by the Runner's own (a deployment's come below both)."""
    return {**context_values(runner.group_id), **context_values(runner.id)}
