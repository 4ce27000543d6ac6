"""The real template.yaml in this process: moto's server with every resource provisioned from
the template, the table models aimed at it, and the stream and queue sources of the functions
asked for polled as local mode polls them. Domain code then runs against real DynamoDB, SQS, S3
and KMS APIs, with `etikett.clock` under the test's control if it wants."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import boto3
import pytest

from etikett import settings
from etikett.domain.actors import Caller, Invocation
from etikett.domain.webhooks import webhooks
from etikett.local import provision
from etikett.local.aws import LocalAws
from etikett.local.functions import FunctionRegistry
from etikett.local.sqs import SqsPoller
from etikett.local.stream_checkpoints import CHECKPOINT_FILE, Checkpoints
from etikett.local.streams import StreamPoller, moto_shard_end
from etikett.local.template import Template, load
from etikett.store import base as store
from etikett.store import clients

REPO = Path(__file__).resolve().parents[2]
REGION = "eu-central-1"
ADMIN = Invocation(
    Caller(actor="human", subject="test-admin", roles=frozenset({"admin"})), "createWebhook"
)


class Stack:
    def __init__(
        self,
        template: Template,
        resolver: provision.Resolver,
        endpoint: str,
        functions: FunctionRegistry,
    ) -> None:
        self.template = template
        self.resolver = resolver
        self.endpoint = endpoint
        self.functions = functions  # the warm functions the pollers invoke
        session = boto3.session.Session(region_name=REGION)
        self.sqs = session.client("sqs", endpoint_url=endpoint)
        self.dynamodb = session.client("dynamodb", endpoint_url=endpoint)
        self.streams = session.client("dynamodbstreams", endpoint_url=endpoint)
        self.created: list[str] = []

    def queue(self, logical_id: str) -> str:
        return str(self.resolver.refs[logical_id])

    def receive_all(self, logical_id: str, wait: int = 1) -> list[dict[str, Any]]:
        return self.sqs.receive_message(
            QueueUrl=self.queue(logical_id), MaxNumberOfMessages=10, WaitTimeSeconds=wait
        ).get("Messages", [])

    def subscribe(self, url: str, kinds: list[str]) -> webhooks.CreatedWebhook:
        created = webhooks.create(ADMIN, webhooks.NewWebhook(url=url, events=kinds))
        self.created.append(created.id)
        return created

    def unsubscribe_all(self) -> None:
        while self.created:
            webhooks.delete(ADMIN, self.created.pop())


@contextmanager
def local_stack(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    parameters: dict[str, Any] | None = None,
    polled: frozenset[str] = frozenset(),
) -> Iterator[Stack]:
    """The stack, with the event sources of the functions `polled` (logical ids) polled.

    moto's state is per process: one stack at a time (a module fixture)."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "local",
        "AWS_SECRET_ACCESS_KEY": "local",
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_LOG_LEVEL": "WARNING",
    }.items():
        monkeypatch.setenv(name, value)
    with LocalAws(None) as aws:
        monkeypatch.setenv("AWS_ENDPOINT_URL", aws.endpoint_url)
        template = load(REPO / "template.yaml")
        resolver = provision.provision(
            template,
            aws.endpoint_url,
            REGION,
            # As local mode gives them: receivers and models of tests live on loopback.
            {
                "Build": "test",
                "SetupSecret": "",
                "OutgoingPrivateNetworks": "true",
                "LoopbackPrinters": "true",
                **(parameters or {}),
            },
        )
        for name, value in provision.function_environment(template, resolver).items():
            monkeypatch.setenv(name, value)
        settings.reload()
        # The tables were imported before this stack's names were known; clients made for
        # another endpoint are made again.
        store.bind()
        functions = FunctionRegistry(template.functions, REGION)
        streams = StreamPoller(
            [s for s in template.stream_sources if s.function in polled],
            resolver,
            functions,
            aws.endpoint_url,
            REGION,
            Checkpoints(home / CHECKPOINT_FILE),
            shard_end=moto_shard_end(REGION),
        )
        queues = SqsPoller(
            [s for s in template.sqs_sources if s.function in polled],
            resolver,
            functions,
            aws.endpoint_url,
            REGION,
        )
        streams.start()
        queues.start()
        try:
            yield Stack(template, resolver, aws.endpoint_url, functions)
        finally:
            streams.stop()
            queues.stop()
            clients.forget()
