"""A DynamoDB client of a fresh local AWS (moto's server on loopback with local mode's patches),
holding one table: for the tests of those patches."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import boto3
import pytest

from etikett.local.aws import LocalAws


@contextmanager
def table_client(table: str, keys: dict[str, str]) -> Iterator[Any]:
    """A client of a local AWS with `table` made, keyed by `keys` ({name: "S"|"N"|"B"}, the
    hash key first, then the range key if any), on demand."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AWS_ACCESS_KEY_ID", "testing")
        patch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        with LocalAws(None) as aws:
            client = boto3.client(
                "dynamodb", region_name="eu-central-1", endpoint_url=aws.endpoint_url
            )
            client.create_table(
                TableName=table,
                KeySchema=[
                    {"AttributeName": name, "KeyType": kind}
                    for name, kind in zip(keys, ("HASH", "RANGE"), strict=False)
                ],
                AttributeDefinitions=[
                    {"AttributeName": name, "AttributeType": type_} for name, type_ in keys.items()
                ],
                BillingMode="PAY_PER_REQUEST",
            )
            yield client
