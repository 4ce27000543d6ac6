"""Where Powertools Idempotency keeps its records: the idempotency table (DynamoDB)."""

from __future__ import annotations

from functools import cache
from typing import Any

from etikett.settings import get_settings
from etikett.store import clients


@cache
def persistence() -> Any:
    """Powertools' persistence layer on the idempotency table (made once per process)."""
    # Loaded here, not at the mcp and printing functions' cold start.
    from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer

    # A client of the process's one botocore session, not a session of Powertools' own.
    return DynamoDBPersistenceLayer(
        table_name=get_settings().required("idempotency_table"),
        boto3_client=clients.client("dynamodb"),
    )
