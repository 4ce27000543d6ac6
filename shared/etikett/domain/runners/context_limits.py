"""Bounds of context parameters (of deployments, Runner groups and Runners): each value at most
4 KB as JSON, each owner's parameters at most 64 KB together and at most 100 of them. A
deployment keeps its context in its own item, and a Runner receives deployment, group and
Runner context merged: unbounded values made items DynamoDB refuses and answers too large to
serve."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from etikett_engine.errors import InvalidRequest, PayloadTooLarge, ProblemCode

MAX_VALUE_BYTES = 4096
MAX_TOTAL_BYTES = 65_536
MAX_PARAMETERS = 100


def size_of(value: Any) -> int:
    """Bytes of the value as compact JSON (UTF-8)."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def check_value(name: str, value: Any) -> int:
    """The value's size; 413 `context.value_too_large` when over the bound."""
    size = size_of(value)
    if size > MAX_VALUE_BYTES:
        raise PayloadTooLarge(
            f"The context parameter {name!r} is {size} bytes as JSON; at most {MAX_VALUE_BYTES}.",
            ProblemCode.CONTEXT_VALUE_TOO_LARGE,
            name=name,
            size=size,
            limit=MAX_VALUE_BYTES,
        )
    return size


def check_all(owner: str, values: Mapping[str, Any]) -> None:
    """Every value within its bound and all of them together within theirs (422
    `context.too_large`)."""
    total = sum(check_value(name, value) + len(name.encode()) for name, value in values.items())
    if len(values) > MAX_PARAMETERS:
        raise InvalidRequest(
            f"{owner} would have {len(values)} context parameters; at most {MAX_PARAMETERS}.",
            ProblemCode.CONTEXT_TOO_LARGE,
            owner=owner,
            parameters=len(values),
            limit_parameters=MAX_PARAMETERS,
            size=total,
            limit=MAX_TOTAL_BYTES,
        )
    if total > MAX_TOTAL_BYTES:
        raise InvalidRequest(
            f"{owner}'s context parameters would be {total} bytes as JSON; at most "
            f"{MAX_TOTAL_BYTES}. Remove some, or keep large data elsewhere.",
            ProblemCode.CONTEXT_TOO_LARGE,
            owner=owner,
            parameters=len(values),
            limit_parameters=MAX_PARAMETERS,
            size=total,
            limit=MAX_TOTAL_BYTES,
        )


def check_put(owner: str, current: Mapping[str, Any], name: str, value: Any) -> None:
    """Setting `name` to `value` among the owner's `current` values stays within the bounds."""
    check_value(name, value)
    check_all(owner, {**current, name: value})
