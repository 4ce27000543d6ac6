"""A lint finding explained in plain words by a language model, with suggested JSON Patch
operations that were checked to apply to the document the finding is about.
"""

from collections.abc import Callable
from functools import cache
from typing import Any, Literal

from pydantic import ConfigDict, Field

from etikett.ai.conversation import Reply, Request, Tool, Turn
from etikett.domain.assistants.assistant import (
    MAX_TEXT,
    PATCH_OPERATION_SCHEMA,
    Conversation,
    applying,
    as_json,
    flow_version,
    shown_flow,
    shown_label,
)
from etikett_engine.errors import ProblemCode, ProviderFailed
from etikett_engine.model import Model

TARGET = r"^(flw|lbl)_[0-9A-Za-z]{1,40}(@[1-9][0-9]{0,8})?$"


class LintFinding(Model):
    """A finding as lint (or a `document.invalid` error) reports it."""

    model_config = ConfigDict(extra="allow")
    code: str | None = Field(default=None, max_length=200, examples=["flow.cel_invalid"])
    severity: str | None = Field(default=None, max_length=20)
    path: str | None = Field(default=None, max_length=1000, examples=["/nodes/2/condition"])
    node_id: str | None = Field(default=None, max_length=200)
    message: str = Field(min_length=1, max_length=4000)
    params: dict[str, Any] = Field(default_factory=dict)


class LintExplanationRequest(Model):
    model_config = ConfigDict(extra="forbid")
    target: str = Field(
        pattern=TARGET,
        description="The document the finding is about: `flw_…@N` or `lbl_…@N` (without `@N`: "
        "the latest version).",
        examples=["flw_01JABCDEFGHJKMNPQRSTVWXYZ0@3"],
    )
    finding: LintFinding
    document: dict[str, Any] | None = Field(
        default=None,
        description="The unsaved document the finding is about: an editor's changes to the "
        "target (which must exist; `@N` is ignored). It is checked like a saved one (422 "
        "`document.invalid`), explained and patched instead of the target's; nothing is saved.",
    )
    credential: str | None = Field(
        default=None, description="A language-model credential's ref; default: the default one."
    )


class LintExplanation(Model):
    explanation: str
    suggested_operations: list[dict[str, Any]] = Field(
        description="JSON Patch operations against the target version, each checked to apply "
        "in order, keep every id and leave a valid document; others were dropped."
    )
    dropped_operations: int = Field(description="How many of the model's suggestions were dropped.")
    model: str


EXPLAIN_TOOL = Tool(
    name="explain_finding",
    description="Give the explanation of the finding and, if a fix is clear, JSON Patch "
    "operations (RFC 6902) against the document that fix it.",
    input_schema={
        "type": "object",
        "properties": {
            "explanation": {
                "type": "string",
                "description": "Plain words for the person who authored the document: what is "
                "wrong, why it matters, how to fix it.",
            },
            "operations": {"type": "array", "items": PATCH_OPERATION_SCHEMA},
        },
        "required": ["explanation"],
    },
)

EXPLAIN_SYSTEM = (
    "You help people who design labels and print automations (flows) in Etikett. You are given "
    "a document and one finding that lint reported about it. Explain the finding in plain, "
    "friendly words (no jargon beyond the document's own terms), in the language of the "
    "finding's message. If a fix is clear, suggest RFC 6902 JSON Patch operations against the "
    "document exactly as given. Never change or remove an `id`; give new items new ids. Answer "
    "through the explain_finding tool."
)


def _target_document(
    target: str, given: dict[str, Any] | None
) -> tuple[Literal["flow", "label"], dict[str, Any], str, Callable[[dict[str, Any]], Any]]:
    """The document a finding is about: the target version's, or the unsaved one given for it
    (once it proved valid, and the target exists)."""
    reference, _, number = target.partition("@")
    version = int(number) if number and given is None else None
    if reference.startswith("flw_"):
        # Only a flow's findings need the flows aggregate: not loaded at the AI cold start.
        from etikett.domain.flows import flows

        if given is None:
            _, document = flow_version(reference, version)
        else:
            flows.load(reference)
            flows.parse(given)
            document = given
        return "flow", document, "nodes", flows.parse_to_save
    # Loaded here, not at the ai function's cold start.
    from etikett.domain.labels import label_records, label_validation, label_versions

    if given is None:
        document = label_versions.get_document(reference, version).document
    else:
        label_records.load_label(reference)
        label_validation.validate_label(given)
        document = given
    return "label", document, "objects", label_validation.validate_label


def explain_finding(request: LintExplanationRequest) -> LintExplanation:
    kind, document, id_collection, check = _target_document(request.target, request.document)
    conversation = Conversation(request.credential)
    share = conversation.shares_samples
    shown = shown_flow(document, share) if kind == "flow" else shown_label(document, share)
    context: dict[str, Any] = {}
    if kind == "flow":
        context["node_type"] = _node_type_of(document, request.finding)
    prompt = (
        f"The {kind} document ({_named(request)}):\n{as_json(shown)}\n\n"
        f"The finding:\n{as_json(request.finding.model_dump(exclude_none=True))}\n"
        + (
            f"\nThe node type's registry entry:\n{as_json(context['node_type'])}\n"
            if context.get("node_type")
            else ""
        )
    )
    reply = conversation.ask(
        Request(system=EXPLAIN_SYSTEM, turns=(Turn(role="user", text=prompt),), tool=EXPLAIN_TOOL)
    )
    explanation, operations = _explanation_of(reply)
    kept, dropped = applying(document, operations, id_collection, check)
    return LintExplanation(
        explanation=explanation,
        suggested_operations=kept,
        dropped_operations=dropped,
        model=conversation.model_name(reply),
    )


def _named(request: LintExplanationRequest) -> str:
    if request.document is None:
        return request.target
    return f"unsaved changes to {request.target.partition('@')[0]}"


def _node_type_of(document: dict[str, Any], finding: LintFinding) -> dict[str, Any] | None:
    node_id = finding.node_id
    if node_id is None and finding.path and finding.path.startswith("/nodes/"):
        index = finding.path.split("/")[2]
        nodes = document.get("nodes") or []
        if index.isdigit() and int(index) < len(nodes):
            node_id = nodes[int(index)].get("id")
    node = next((n for n in document.get("nodes") or [] if n.get("id") == node_id), None)
    if node is None:
        return None
    return next((t for t in _node_types() if t["type"] == node.get("type")), None)


@cache
def _node_types() -> list[dict[str, Any]]:
    # Loaded here, not at the ai function's cold start.
    from etikett_engine.dsl import flow_registry

    return list(flow_registry.registry()["items"])


def _explanation_of(reply: Reply) -> tuple[str, list[Any]]:
    # Loaded here, not at the ai and mcp functions' cold start.
    from etikett.ai.generic_json import json_object_in

    call = reply.call_of(EXPLAIN_TOOL.name)
    data = call.input if call is not None else json_object_in(reply.text)
    if data is None:
        text = reply.text.strip()
        if not text:
            raise ProviderFailed(
                "The language model answered neither text nor the tool.",
                ProblemCode.AI_BAD_RESPONSE,
            )
        return text[:MAX_TEXT], []
    explanation = data.get("explanation")
    if not isinstance(explanation, str) or not explanation.strip():
        explanation = reply.text.strip()
    if not explanation:
        raise ProviderFailed(
            "The language model's answer has no explanation.", ProblemCode.AI_BAD_RESPONSE
        )
    operations = data.get("operations")
    return explanation.strip()[:MAX_TEXT], operations if isinstance(operations, list) else []
