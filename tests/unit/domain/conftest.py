"""The template's tables, queues, buckets and keys on moto's in-process backend (`mock_aws`),
provisioned by local mode's own code, with the settings and the table models aimed at them.

One backend per test module: provisioning costs about a third of a second (moto makes a key pair
for every KMS key), so tests in a module share it and tell their data apart by the random ids
every resource gets. A test that needs the service empty asks for `empty` as well.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from etikett import settings
from etikett.local import provision
from etikett.local.template import Template, load
from etikett.store import base as store
from etikett.store import events
from etikett.store.events import EventRecord

REPO = Path(__file__).resolve().parents[3]
REGION = "eu-central-1"


@dataclass(frozen=True)
class Aws:
    """The provisioned resources: the template's logical ids resolved to their names."""

    template: Template
    resolver: provision.Resolver

    def ref(self, logical_id: str) -> str:
        return str(self.resolver.refs[logical_id])

    def client(self, service: str) -> Any:
        return boto3.session.Session(region_name=REGION).client(service)  # type: ignore[call-overload]

    def tables(self) -> list[str]:
        return [self.ref(name) for name in self.template.resources_of("AWS::DynamoDB::Table")]

    def events_about(self, subject_id: str) -> list[EventRecord]:
        """The outbox's events about `subject_id`, oldest first, as its stream would show them."""
        dynamodb = self.client("dynamodb")
        found = [
            events.from_stream_image(item)
            for page in dynamodb.get_paginator("scan").paginate(TableName=self.ref("EventsTable"))
            for item in page["Items"]
            if item["subject_id"]["S"] == subject_id
        ]
        return sorted(found, key=lambda event: event.id)


def _forget_backend_state() -> None:
    """What the service keeps per warm process that belongs to one backend's data: the CA and
    opened keys of the backend before."""
    from etikett.domain.credentials import credential_vault, opening
    from etikett.domain.deployments import bundles
    from etikett.domain.runners import certificates
    from etikett.domain.webhooks import webhook_delivery

    bundles._record.cache_clear()  # the bundle key, kept like the CA's
    bundles._private_key.cache_clear()
    certificates._record.cache_clear()
    certificates.ca_certificate.cache_clear()
    certificates.authority.cache_clear()
    opening._keys.clear()
    credential_vault._store_keys.clear()
    webhook_delivery._secrets.clear()


_aimed_at: tuple[object, ...] | None = None


def _aim_tables() -> None:
    """Aim the table models and clients at what the settings name now. Re-aiming makes every
    model and client anew (botocore set-up again), so only when the names change:
    every module's backend has the same table and queue names."""
    global _aimed_at
    from etikett.store import idempotency

    current = settings.get_settings()
    names = (
        current.region,
        current.dynamodb_endpoint,
        *(value for name, value in current.model_dump().items() if name.endswith("_table")),
    )
    if names == _aimed_at:
        return
    store.bind()  # the tables were imported before these names were known (clients too)
    idempotency.persistence.cache_clear()
    _aimed_at = names


@pytest.fixture(scope="package", autouse=True)
def _aim_back() -> Iterator[None]:
    """After the package, the models and clients follow the settings as they are again."""
    global _aimed_at
    yield
    from etikett.store import idempotency

    settings.reload()
    store.bind()
    idempotency.persistence.cache_clear()
    _forget_backend_state()
    _aimed_at = None


@pytest.fixture(scope="module")
def aws() -> Iterator[Aws]:
    with pytest.MonkeyPatch.context() as env:
        # Nothing may reach a real account or a local server: moto answers in this process.
        for name in list(os.environ):
            if name.startswith("AWS_ENDPOINT_URL") or name == "AWS_PROFILE":
                env.delenv(name)
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": REGION,
            "AWS_DEFAULT_REGION": REGION,
            "POWERTOOLS_TRACE_DISABLED": "true",
            "POWERTOOLS_METRICS_DISABLED": "true",
            "POWERTOOLS_LOG_LEVEL": "WARNING",
        }.items():
            env.setenv(name, value)
        with mock_aws():
            template = load(REPO / "template.yaml")
            # As local mode gives them: receivers and models of tests live on loopback, setup
            # needs no secret, printers may be the simulator on loopback.
            parameters = {
                "Build": "test",
                "SetupSecret": "",
                "OutgoingPrivateNetworks": "true",
                "LoopbackPrinters": "true",
            }
            resolver = provision.provision(template, None, REGION, parameters)
            for name, value in provision.function_environment(template, resolver).items():
                env.setenv(name, value)
            settings.reload()
            _aim_tables()
            _forget_backend_state()
            yield Aws(template, resolver)
    settings.reload()


@pytest.fixture
def empty(aws: Aws) -> Aws:
    """The module's backend with every table emptied: for rules about an empty service."""
    dynamodb = aws.client("dynamodb")
    for table in aws.tables():
        schema = dynamodb.describe_table(TableName=table)["Table"]["KeySchema"]
        names = {f"#k{i}": key["AttributeName"] for i, key in enumerate(schema)}
        keys = [
            item
            for page in dynamodb.get_paginator("scan").paginate(
                TableName=table,
                ProjectionExpression=", ".join(names),
                ExpressionAttributeNames=names,
            )
            for item in page["Items"]
        ]
        for start in range(0, len(keys), 25):
            batch = [{"DeleteRequest": {"Key": key}} for key in keys[start : start + 25]]
            dynamodb.batch_write_item(RequestItems={table: batch})
    return aws
