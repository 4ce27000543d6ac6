"""What every table model shares: where its table is, and how a transaction reaches DynamoDB."""

from __future__ import annotations

import functools
import os
from typing import Any, TypeVar

from pynamodb.connection import Connection
from pynamodb.exceptions import DoesNotExist
from pynamodb.models import Model, _ModelFuture
from pynamodb.transactions import TransactGet, TransactWrite

from etikett import config

M = TypeVar("M", bound=Model)

_TIMEOUTS: dict[str, Any] = {
    "connect_timeout_seconds": 2,
    "read_timeout_seconds": 10,
    "max_retry_attempts": 3,
}


def table_meta(env_name: str, logical_id: str) -> type:
    """A pynamodb `Meta` for the table whose name the template passes in `env_name`."""

    class Meta:
        table_name = os.environ.get(env_name, f"etikett-{logical_id}")
        region = config.region()
        host = config.dynamodb_endpoint()
        connect_timeout_seconds = _TIMEOUTS["connect_timeout_seconds"]
        read_timeout_seconds = _TIMEOUTS["read_timeout_seconds"]
        max_retry_attempts = _TIMEOUTS["max_retry_attempts"]

    return Meta


def transaction() -> TransactWrite:
    """One all-or-nothing write across tables: a change and its audit entry land together."""
    return TransactWrite(connection=_connection(config.region(), config.dynamodb_endpoint()))


def reads() -> TransactGet:
    """Several items, from any tables, in one round trip (one consistent read)."""
    return TransactGet(connection=_connection(config.region(), config.dynamodb_endpoint()))


def found(future: _ModelFuture[M]) -> M | None:
    """A `reads()` result: the item, or None where there was none."""
    try:
        return future.get()
    except DoesNotExist:
        return None


@functools.cache
def _connection(region: str, host: str | None) -> Connection:
    # One per process, like the models' own: a new Connection makes a new botocore session and
    # client on first use, which reads botocore's endpoint data again (≈ 100-300 ms).
    return Connection(region=region, host=host, **_TIMEOUTS)


def cancellation_codes(error: Exception) -> list[str | None]:
    """The per-item reasons DynamoDB gave for cancelling a transaction, in item order."""
    reasons = getattr(error, "cancellation_reasons", None) or []
    return [reason.code if reason is not None else None for reason in reasons]
