"""Examples of the Credentials and AI operations' requests and answers, as the OpenAPI document
shows them (each fits its schema, and the documents in them are real ones:
tests/unit/test_ai_openapi_examples.py).

Request examples go on the routes (`body(...)`); answers are set by `publish` once the document
is built, because FastAPI drops every null from what routes declare, and an answer's nulls (a
list's `next_cursor`, a secret's `provider`, a passing test's `code`) belong in its example."""

from __future__ import annotations

from typing import Any

from fastapi import Body

from etikett.api.answer_examples import answer_media

AT = "2026-05-04T10:00:00.000Z"
LABEL_ID = "lbl_01J8Z7Q4X9V3M2N5P6R7S8T9V1"
FLOW_ID = "flw_01J8Z7Q4X9V3M2N5P6R7S8T9U0"
MODEL = "claude-sonnet-4-5"


def body(**examples: tuple[str, Any]) -> Any:
    """A request body's `Body(...)` with named examples: name=(summary, value)."""
    return Body(
        openapi_examples={
            name: {"summary": summary, "value": value}
            for name, (summary, value) in examples.items()
        }
    )


# --- credentials ---------------------------------------------------------------------------------

LANGUAGE_MODEL = {
    "ref": "claude",
    "kind": "language-model",
    "provider": "anthropic-messages",
    "model": MODEL,
    "endpoint": "https://api.anthropic.com",
    "shareSampleValues": False,
    "default": True,
    "has_secret": True,
    "created_at": AT,
    "created_by": "anna",
}
LOCAL_MODEL = {
    "ref": "local",
    "kind": "language-model",
    "provider": "openai-chat",
    "model": "llama3.2",
    "endpoint": "http://127.0.0.1:11434/v1",
    "shareSampleValues": True,
    "default": False,
    "has_secret": False,
    "created_at": AT,
    "created_by": "anna",
}
SECRET = {
    "ref": "erp-token",
    "kind": "secret",
    "provider": None,
    "model": None,
    "endpoint": None,
    "shareSampleValues": None,
    "default": False,
    "has_secret": True,
    "created_at": AT,
    "created_by": "anna",
}
CREDENTIAL_LIST = {"items": [LANGUAGE_MODEL, LOCAL_MODEL, SECRET], "next_cursor": None}
TEST_PASSED = {
    "ok": True,
    "latency_ms": 412,
    "code": None,
    "detail": None,
    "model": MODEL,
}
TEST_FAILED = {
    "ok": False,
    "latency_ms": 187,
    "code": "ai.unauthorized",
    "detail": "The language model refused the credential (HTTP 401).",
    "model": None,
}
EXPORT_PASSPHRASE = "correct horse battery staple"
# A real export of the store key bytes 0..31 under EXPORT_PASSPHRASE (`unwrap_export` opens it).
MASTER_KEY_EXPORT = {
    "format": "etikett.credential-store-key",
    "version": 1,
    "key_id": "csk_2cc65a781905e760",
    "created_at": AT,
    "kdf": {
        "name": "argon2id",
        "time_cost": 3,
        "memory_cost_kib": 65536,
        "parallelism": 1,
        "salt": "P3uO2qjAIh5J9qYXwcHM8A==",
    },
    "cipher": {"name": "AES-256-GCM", "nonce": "CudnHB5kMQglZ6LG"},
    "ciphertext": "RxlV0ZbCERsYuSsNBg5mL8EwU+hal2aMnnWE9ApoAMZ3ePzyhOvtnHdLFTj/+mrW",
}
EXPORT_REQUEST = body(
    passphrase=("A passphrase kept apart from the export", {"passphrase": EXPORT_PASSPHRASE})
)

# --- AI: explanations and questions --------------------------------------------------------------

FINDING = {
    "code": "flow.cel_invalid",
    "severity": "error",
    "path": "/nodes/1/condition",
    "node_id": "some",
    "message": "The condition does not compile: unexpected end of input at line 1, column 11.",
    "params": {"line": 1, "column": 11},
}
LINT_EXPLANATION_REQUEST = body(
    flow=("Explain a flow lint finding", {"target": f"{FLOW_ID}@3", "finding": FINDING})
)
LINT_EXPLANATION = {
    "explanation": "The filter's condition ends after `>`: it compares the quantity with "
    "nothing, so no record could pass. Compare it with a number, e.g. `record.qty > 0`.",
    "suggested_operations": [
        {"op": "replace", "path": "/nodes/1/condition", "value": "record.qty > 0"}
    ],
    "dropped_operations": 0,
    "model": MODEL,
}
LOG_QUESTION_REQUEST = body(
    approvals=(
        "Who approved a label, since a date",
        {
            "question": "Who approved the shipping label this week, and was it an agent's version?",
            "filters": {
                "operation": "postLabelStatus",
                "target": LABEL_ID,
                "since": "2026-05-04T00:00:00Z",
            },
        },
    )
)
LOG_ANSWER = {
    "answer": "Anna approved version 4 on Monday (aud_01J8ZB2C3D4E5F6G7H8J9K0M1N); it was "
    "authored by the agent erp-sync, so a person had to approve it.",
    "cited_entry_ids": ["aud_01J8ZB2C3D4E5F6G7H8J9K0M1N"],
    "entries_considered": 3,
    "model": MODEL,
}

# --- AI: Copilots --------------------------------------------------------------------------------

COPILOT_REQUEST = body(
    label=(
        "Ask for a change to the latest version",
        {"instruction": "Add a Code 128 barcode of the SKU under the SKU text."},
    ),
    version=(
        "Start from a named version",
        {"instruction": "Make the title bold.", "version": 3, "credential": "claude"},
    ),
)
BARCODE = {
    "id": "sku_code",
    "type": "barcode",
    "symbology": "code128",
    "x_mm": 6.0,
    "y_mm": 12.0,
    "height_mm": 9.0,
    "module_width_dots": 2,
    "human_readable": False,
    "expression": "sku",
}
PROPOSED_LABEL = {
    "size": {"width_mm": 50.0, "height_mm": 25.0},
    "dpi": 203,
    "variables": [{"name": "sku", "type": "string", "sample": "ETK-4711", "required": True}],
    "objects": [
        {
            "id": "title",
            "type": "text",
            "x_mm": 3.0,
            "y_mm": 2.0,
            "content": "Etikett GmbH",
            "size_pt": 9.0,
            "weight": 600,
        },
        {
            "id": "sku_text",
            "type": "text",
            "x_mm": 3.0,
            "y_mm": 7.0,
            "size_pt": 8.0,
            "expression": "sku",
        },
        BARCODE,
    ],
}
# The proposal as its preview renders it (50 x 25 mm at 203 dpi: 400 x 200 dots, 1 bit).
PREVIEW_PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAZAAAADIAQAAAADubopPAAABlklEQVR4nO3WsU7DMBAGYEcZzBDVYoOlEW8Q1KVD1Bt5"
    "HjaGirRi6BLRR+BVDBm8IPUVUjp0Q7a6OMKqcVqJjvVtCO4fLX+yfXeDmUeHESFC5D8TB6clEUEk9/WRuH672IOKINm"
    "RaB5N8v4UtfFtGkmUz92RNGs0USaWuLQuJ5zNKmXeBvnFYxwZT9NAFl4ywYYRzxd5XdgkXKwnnA0ZjyE32hxI0ygxiC"
    "OpsT2ZNUqJ5/MkVKzmmp1IVJHr9Eg0giTm0BcMuT2QBkMK/fVDBjFjGVr5kMi2alkgUa3kT3U5TVpd6TSaNHUJXNvKi"
    "UCuImYMGSJEiPwRIjN2bav9mHnoMMQHYuE1kqz8tjPht2BbSBBkE0j3AZcI0vgOzCfcI8jCG9jtwSDI0u9gE09kvu1y"
    "v0USK7wChbqY5fMVltzNl7DCkY2f8SWuYutAXnAk7IUcRyyOSBFI5SeAIw5HkCFChMgvJdnOuZGW7h3SsiilHOmi2a0"
    "gyyAtiBAhQoQIESJEiBAhQoQIkXMEEyJEiBAhQuRsvgHj/x+Kk3axVQAAAABJRU5ErkJggg=="
)
LABEL_COPILOT_ANSWER = {
    "proposal": {
        "base_version": 3,
        "operations": [{"op": "add", "path": "/objects/-", "value": BARCODE}],
        "document": PROPOSED_LABEL,
    },
    "explanation": "Added a Code 128 barcode of the SKU below the SKU text, 2 dots per module "
    "so it scans at 203 dpi.",
    "findings": None,
    "preview_png_base64": PREVIEW_PNG,
    "preview_error": None,
    "saved": False,
    "model": MODEL,
}
FORM_COPILOT_ANSWER = {
    "proposal": {
        "base_version": 0,
        "operations": [
            {
                "op": "add",
                "path": "/fields/0/help",
                "value": "As printed on the box, e.g. ETK-4711.",
            }
        ],
        "document": {
            "fields": [
                {
                    "id": "sku",
                    "variable": "sku",
                    "label": "SKU",
                    "kind": "text",
                    "required": True,
                    "help": "As printed on the box, e.g. ETK-4711.",
                }
            ]
        },
    },
    "explanation": "The SKU field now says where to find the SKU.",
    "findings": None,
    "preview_png_base64": None,
    "preview_error": None,
    "saved": False,
    "model": MODEL,
}
PROPOSED_FLOW = {
    "nodes": [
        {"id": "inbox", "type": "trigger.http", "path": "orders", "wires": ["some"]},
        {"id": "some", "type": "logic.filter", "condition": "record.qty > 0", "wires": ["note"]},
        {"id": "note", "type": "action.log", "message": '"order " + string(record.id)'},
    ]
}
FLOW_COPILOT_ANSWER: dict[str, Any] = {
    "proposal": {
        "base_version": 3,
        "operations": [{"op": "replace", "path": "/nodes/1/condition", "value": "record.qty > 0"}],
        "document": PROPOSED_FLOW,
    },
    "explanation": "Orders without a quantity are no longer passed on.",
    "findings": [],
    "preview_png_base64": None,
    "preview_error": None,
    "saved": False,
    "model": MODEL,
}

# operationId → (status, {name: (summary, example)})
ANSWERS: dict[str, tuple[int, dict[str, tuple[str, Any]]]] = {
    "listCredentials": (200, {"credentials": ("Two models and a secret", CREDENTIAL_LIST)}),
    "createCredential": (201, {"model": ("The stored language model", LANGUAGE_MODEL)}),
    "postCredentialTest": (
        200,
        {
            "passed": ("The model answered", TEST_PASSED),
            "failed": ("The provider refused the key", TEST_FAILED),
        },
    ),
    "exportCredentialMasterKey": (
        200,
        {
            "export": (
                f"The store key under the passphrase {EXPORT_PASSPHRASE!r}",
                MASTER_KEY_EXPORT,
            )
        },
    ),
    "aiLintErklaerung": (200, {"explanation": ("A fix the model suggested", LINT_EXPLANATION)}),
    "aiLogQA": (200, {"answer": ("An answer citing the entry it rests on", LOG_ANSWER)}),
    "postLabelCopilot": (200, {"proposal": ("A barcode added", LABEL_COPILOT_ANSWER)}),
    "postFormCopilot": (200, {"proposal": ("A help text added", FORM_COPILOT_ANSWER)}),
    "postFlowCopilot": (200, {"proposal": ("A condition fixed", FLOW_COPILOT_ANSWER)}),
}


def publish(spec: dict[str, Any]) -> None:
    """Set each answer's examples in the built OpenAPI document."""
    for media, examples in answer_media(spec, ANSWERS):
        media["examples"] = {
            name: {"summary": summary, "value": value}
            for name, (summary, value) in examples.items()
        }
