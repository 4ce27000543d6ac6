"""Every Flows and Deployments operation shows, in the OpenAPI document, an example of its
request body (where it takes one) and of its answer; each example fits its own schema."""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from etikett.api.openapi import build

GROUPS = {"Flows", "Deployments"}


@cache
def _document() -> dict[str, Any]:
    return build()


def _operations() -> list[tuple[str, dict[str, Any]]]:
    return [
        (operation["operationId"], operation)
        for item in _document()["paths"].values()
        for operation in item.values()
        if GROUPS & set(operation.get("tags", []))
    ]


def _examples(media: dict[str, Any]) -> list[Any]:
    found = [media["example"]] if "example" in media else []
    found += [entry["value"] for entry in (media.get("examples") or {}).values()]
    return found


def _valid(schema: dict[str, Any], value: Any) -> list[str]:
    root = {**schema, "components": _document()["components"]}
    return [error.message for error in Draft202012Validator(root).iter_errors(value)]


def test_every_operation_of_both_groups_is_checked() -> None:
    names = {name for name, _ in _operations()}
    wanted = {"listFlows", "postFlowDryRun", "createDeployment", "listRunnerGroupDeployments"}
    assert wanted <= names
    assert len(names) == 25


@pytest.mark.parametrize(("name", "operation"), _operations(), ids=lambda v: str(v)[:40])
def test_requests_and_answers_have_examples_that_fit(name: str, operation: dict[str, Any]) -> None:
    body = operation.get("requestBody")
    if body is not None:
        media = body["content"]["application/json"]
        examples = _examples(media)
        assert examples, f"{name}: no request example"
        for example in examples:
            assert _valid(media["schema"], example) == [], name
    answers = [
        response["content"]["application/json"]
        for status, response in operation["responses"].items()
        if status.startswith("2") and "application/json" in response.get("content", {})
    ]
    for media in answers:
        examples = _examples(media)
        assert examples, f"{name}: no answer example"
        for example in examples:
            assert _valid(media["schema"], example) == [], name
