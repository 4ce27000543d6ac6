"""Every Credentials and AI operation shows, in the OpenAPI document, an example of its request
body (where it takes one) and of its answer, and each example fits its own schema; the examples
that are documents are real ones (the export opens with its passphrase, a proposal is a valid
document)."""

from __future__ import annotations

import base64
import io
from functools import cache
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from PIL import Image

from etikett.api import ai_examples
from etikett.api.openapi import build
from etikett.domain import credential_vault
from etikett.dsl.flow import FlowDocument
from etikett.dsl.form import FormDocument
from etikett.dsl.label import LabelDocument

GROUPS = {"Credentials", "AI"}


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


def _answers(operation: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        response["content"]["application/json"]
        for status, response in operation["responses"].items()
        if status.startswith("2") and "application/json" in response.get("content", {})
    ]


def _invalid(schema: dict[str, Any], value: Any) -> list[str]:
    root = {**schema, "components": _document()["components"]}
    return [error.message for error in Draft202012Validator(root).iter_errors(value)]


def test_every_operation_of_both_groups_is_checked() -> None:
    assert {name for name, _ in _operations()} == {
        "listCredentials",
        "createCredential",
        "deleteCredential",
        "postCredentialTest",
        "exportCredentialMasterKey",
        "aiLintErklaerung",
        "aiLogQA",
        "postLabelCopilot",
        "postFormCopilot",
        "postFlowCopilot",
    }


@pytest.mark.parametrize(("name", "operation"), _operations(), ids=lambda v: str(v)[:40])
def test_requests_and_answers_have_examples_that_fit(name: str, operation: dict[str, Any]) -> None:
    body = operation.get("requestBody")
    if body is not None:
        media = body["content"]["application/json"]
        examples = _examples(media)
        assert examples, f"{name}: no request example"
        for example in examples:
            assert _invalid(media["schema"], example) == [], name
    for media in _answers(operation):
        examples = _examples(media)
        assert examples, f"{name}: no answer example"
        for example in examples:
            assert _invalid(media["schema"], example) == [], name


def test_a_wrong_example_is_caught() -> None:
    """The check above can fail: an answer without a required field does not fit."""
    (operation,) = [op for name, op in _operations() if name == "listCredentials"]
    (media,) = _answers(operation)
    broken = {"items": [dict(_examples(media)[0]["items"][0])], "next_cursor": None}
    del broken["items"][0]["has_secret"]
    assert _invalid(media["schema"], broken) != []


def test_answers_keep_their_nulls() -> None:
    """FastAPI drops nulls from what routes declare; a list's `next_cursor` and a secret's
    `provider` are null in the answers, so they are in the examples."""
    (operation,) = [op for name, op in _operations() if name == "listCredentials"]
    (example,) = _examples(_answers(operation)[0])
    assert example["next_cursor"] is None
    secret = next(item for item in example["items"] if item["kind"] == "secret")
    assert secret["provider"] is None and secret["shareSampleValues"] is None


def test_the_documents_in_the_examples_are_real_ones() -> None:
    export = ai_examples.MASTER_KEY_EXPORT
    key = credential_vault.unwrap_export(export, ai_examples.EXPORT_PASSPHRASE)
    assert credential_vault.fingerprint(key) == export["key_id"]
    label = ai_examples.LABEL_COPILOT_ANSWER
    LabelDocument.model_validate(label["proposal"]["document"])
    preview = Image.open(io.BytesIO(base64.b64decode(label["preview_png_base64"])))
    assert preview.format == "PNG" and preview.mode == "1"
    FormDocument.model_validate(ai_examples.FORM_COPILOT_ANSWER["proposal"]["document"])
    FlowDocument.model_validate(ai_examples.FLOW_COPILOT_ANSWER["proposal"]["document"])
