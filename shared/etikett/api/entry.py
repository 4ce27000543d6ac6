"""Turns a group's ASGI app into a Lambda handler with Powertools logging, tracing and metrics.

Only function entries (`functions/<group>/app.py`) call this; domain code never sees Powertools.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, MutableMapping
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.logging import correlation_paths
from aws_lambda_powertools.metrics import MetricUnit
from fastapi import FastAPI
from mangum import Mangum
from starlette.types import ASGIApp

from etikett import clock
from etikett.settings import get_settings

# Answers of these types travel as text; Mangum would base64-encode problem+json otherwise.
TEXT_TYPES = [
    "text/",
    "application/json",
    "application/problem+json",
    "application/javascript",
    "application/xml",
]

Handler = Callable[[dict[str, Any], Any], dict[str, Any]]


def http_handler(app: FastAPI | ASGIApp, service: str) -> Handler:
    """`app`: a group's app, or one wrapped around it (the mcp function's, `served_first`)."""
    logger = Logger(service=f"etikett-{service}")
    metrics = Metrics(namespace="Etikett", service=f"etikett-{service}")
    # Per thread: local mode invokes a function from several threads at once (Lambda never).
    # Mangum runs the app on the invoking thread's event loop.
    seen = threading.local()

    async def remembered(scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        # Starlette keeps `request.state` in scope["state"]: after the call it names the caller.
        if scope["type"] == "http":
            seen.state = scope.setdefault("state", {})
        await app(scope, receive, send)

    asgi = Mangum(remembered, lifespan="off", api_gateway_base_path="/", text_mime_types=TEXT_TYPES)

    @logger.inject_lambda_context(correlation_id_path=correlation_paths.API_GATEWAY_HTTP)
    @metrics.log_metrics
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        started = time.perf_counter()
        seen.state = {}
        remaining = getattr(context, "get_remaining_time_in_millis", None)
        invocation = clock.start_invocation(remaining() if callable(remaining) else None)
        try:
            response = asgi(event, context)
        finally:
            clock.end_invocation(invocation)
        status = int(response.get("statusCode", 500))
        metrics.add_metric(name="Requests", unit=MetricUnit.Count, value=1)
        if status >= 500:
            metrics.add_metric(name="ServerErrors", unit=MetricUnit.Count, value=1)
        http = event.get("requestContext", {}).get("http", {})
        line = {
            "route": event.get("routeKey"),
            "method": http.get("method"),
            "path": event.get("rawPath"),
            "status": status,
            "ms": round((time.perf_counter() - started) * 1000, 1),
            "actor": actor_of(seen.state),
        }
        logger.info("request", extra=line)
        return response

    if tracing_enabled():
        # Tracer imports the X-Ray SDK (≈150 ms outside Lambda): only where traces are wanted.
        from aws_lambda_powertools import Tracer

        tracer = Tracer(service=f"etikett-{service}")
        return tracer.capture_lambda_handler(handler, capture_response=False)
    return handler


def actor_of(state: dict[str, Any]) -> str | None:
    """Who made a request, for its log line: `admin (person)`, `label-bot (agent)`, or a Runner."""
    invocation = state.get("invocation")
    caller = getattr(invocation, "caller", None)
    if caller is None:
        return None
    subject = str(caller.subject)
    if subject.startswith("runner:"):
        return subject.replace(":", " ", 1)
    kind = {"human": "person", "service": "agent"}.get(caller.actor, caller.actor)
    return f"{subject} ({kind})"


def tracing_enabled() -> bool:
    return not get_settings().trace_disabled


def sqs_handler(work: Callable[[dict[str, Any]], None], service: str) -> Handler:
    """An SQS consumer: `work(body)` per message; a failing message is reported as a batch item
    failure, so only it is retried (and dead-lettered after the queue's last try)."""

    # Loaded here, not at the ai, audit, auth and 13 more functions' cold start.
    from aws_lambda_powertools.utilities.batch import (
        BatchProcessor,
        EventType,
        process_partial_response,
    )

    logger = Logger(service=f"etikett-{service}")
    processor = BatchProcessor(event_type=EventType.SQS)

    def record_handler(record: Any) -> None:
        work(json.loads(record.body))

    @logger.inject_lambda_context
    def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
        return dict(
            process_partial_response(
                event=event, record_handler=record_handler, processor=processor, context=context
            )
        )

    return handler
