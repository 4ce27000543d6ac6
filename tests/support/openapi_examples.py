"""The published OpenAPI document's examples, read the way the example tests check them."""

from __future__ import annotations

from functools import cache
from typing import Any

from jsonschema import Draft202012Validator

from etikett.api.openapi import build


@cache
def document() -> dict[str, Any]:
    return build()


def operations(groups: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """(operationId, operation) of every operation tagged with one of `groups`."""
    return [
        (operation["operationId"], operation)
        for item in document()["paths"].values()
        for operation in item.values()
        if groups & set(operation.get("tags", []))
    ]


def examples(media: dict[str, Any]) -> list[Any]:
    found = [media["example"]] if "example" in media else []
    found += [entry["value"] for entry in (media.get("examples") or {}).values()]
    return found


def answers(operation: dict[str, Any]) -> list[dict[str, Any]]:
    """The JSON media of the operation's 2xx answers."""
    return [
        response["content"]["application/json"]
        for status, response in operation["responses"].items()
        if status.startswith("2") and "application/json" in response.get("content", {})
    ]


def schema_errors(schema: dict[str, Any], value: Any) -> list[str]:
    root = {**schema, "components": document()["components"]}
    return [error.message for error in Draft202012Validator(root).iter_errors(value)]


def check_examples(name: str, operation: dict[str, Any]) -> None:
    """The request body (where there is one) and every JSON answer have examples that fit."""
    body = operation.get("requestBody")
    if body is not None:
        media = body["content"]["application/json"]
        found = examples(media)
        assert found, f"{name}: no request example"
        for example in found:
            assert schema_errors(media["schema"], example) == [], name
    for media in answers(operation):
        found = examples(media)
        assert found, f"{name}: no answer example"
        for example in found:
            assert schema_errors(media["schema"], example) == [], name
