"""The sample events in events/ drive the real handlers in process (as `sam local invoke` would)."""

from __future__ import annotations

import importlib.util
import json
import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest

from etikett import settings

REPO = Path(__file__).resolve().parents[2]


def _context() -> SimpleNamespace:
    return SimpleNamespace(
        function_name="etikett-misc",
        memory_limit_in_mb=512,
        invoked_function_arn="arn:aws:lambda:eu-central-1:123456789012:function:x",
        aws_request_id=str(uuid.uuid4()),
        get_remaining_time_in_millis=lambda: 10_000,
    )


@pytest.fixture
def misc_handler(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("POWERTOOLS_TRACE_DISABLED", "true")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    monkeypatch.setenv("ETIKETT_BUILD", "sample")
    settings.reload()
    spec = importlib.util.spec_from_file_location(
        "misc_app_under_test", REPO / "functions" / "misc" / "app.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


def test_get_version_event(misc_handler) -> None:
    event = json.loads((REPO / "events" / "get-version.json").read_text())
    response = misc_handler(event, _context())
    assert response["statusCode"] == 200
    assert json.loads(response["body"]) == {"api_version": "v0.1.0", "build": "sample"}


def test_unknown_route_through_default_is_a_problem(misc_handler) -> None:
    event = json.loads((REPO / "events" / "get-version.json").read_text())
    event["rawPath"] = event["requestContext"]["http"]["path"] = "/api/v1/nowhere"
    event["routeKey"] = event["requestContext"]["routeKey"] = "$default"
    response = misc_handler(event, _context())
    assert response["statusCode"] == 404
    assert response["headers"]["content-type"] == "application/problem+json"
    assert json.loads(response["body"])["code"] == "route.not_found"
