"""Where an operation's answer examples go in the built OpenAPI document.

They are set after the build, because FastAPI drops every null from what routes declare, and an
answer's required nulls (a list's `next_cursor`, a stage's `approved_by`) belong in its example."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


def answer_media(
    spec: dict[str, Any], answers: Mapping[str, tuple[int, Any]]
) -> Iterator[tuple[dict[str, Any], Any]]:
    """(the JSON media of the answer's status, what to show there) for every operation of
    `answers` (operationId → (status, examples)) in `spec`."""
    for item in spec.get("paths", {}).values():
        for operation in item.values():
            found = answers.get(operation.get("operationId", ""))
            if found is not None:
                status, shown = found
                yield operation["responses"][str(status)]["content"]["application/json"], shown
