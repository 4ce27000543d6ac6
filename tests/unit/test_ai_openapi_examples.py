"""Every Credentials and AI operation shows, in the OpenAPI document, an example of its request
body (where it takes one) and of its answer, and each example fits its own schema; the examples
that are documents are real ones (the export opens with its passphrase, a proposal is a valid
document)."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from etikett.api import ai_examples
from etikett.domain.credentials import credential_vault
from etikett_engine.dsl.flow import FlowDocument
from etikett_engine.dsl.form import FormDocument
from etikett_engine.dsl.label import LabelDocument
from support.openapi_examples import answers, check_examples, examples, operations, schema_errors

GROUPS = {"Credentials", "AI"}


def test_every_operation_of_both_groups_is_checked() -> None:
    assert {name for name, _ in operations(GROUPS)} == {
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


@pytest.mark.parametrize(("name", "operation"), operations(GROUPS), ids=lambda v: str(v)[:40])
def test_requests_and_answers_have_examples_that_fit(name: str, operation: dict[str, Any]) -> None:
    check_examples(name, operation)


def test_a_wrong_example_is_caught() -> None:
    """The check above can fail: an answer without a required field does not fit."""
    (operation,) = [op for name, op in operations(GROUPS) if name == "listCredentials"]
    (media,) = answers(operation)
    broken = {"items": [dict(examples(media)[0]["items"][0])], "next_cursor": None}
    del broken["items"][0]["has_secret"]
    assert schema_errors(media["schema"], broken) != []


def test_answers_keep_their_nulls() -> None:
    """FastAPI drops nulls from what routes declare; a list's `next_cursor` and a secret's
    `provider` are null in the answers, so they are in the examples."""
    (operation,) = [op for name, op in operations(GROUPS) if name == "listCredentials"]
    (example,) = examples(answers(operation)[0])
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
