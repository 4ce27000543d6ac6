"""Copilots for labels, forms and flows: the model gets the document, its schema and registry and
the person's instruction, and answers through a tool whose input is JSON Patch operations. The
service validates the proposal exactly like a patch (ids kept, the schema, CEL; lint for flows);
when it does not validate, the model is told why once and may answer again. The answer is a
proposal with its findings (and a preview for labels). A Copilot never saves anything: saving is
`patchLabelDocument`/`patchFlowDocument`/`patchLabelForm` with the proposal's operations."""

import base64
from collections.abc import Callable
from functools import cache
from typing import Any, Literal, NamedTuple

from pydantic import ConfigDict, Field

from etikett.ai.conversation import Request, Tool, ToolCall, Turn
from etikett.domain import documents
from etikett.domain.assistants.assistant import (
    PATCH_OPERATION_SCHEMA,
    Conversation,
    as_json,
    flow_version,
    shown_flow,
    shown_label,
)
from etikett_engine.errors import EtikettError, ProblemCode, ProviderFailed
from etikett_engine.flows.findings import Finding
from etikett_engine.model import Model

MAX_OPERATIONS = 200
Kind = Literal["label", "form", "flow"]


class CopilotRequest(Model):
    model_config = ConfigDict(extra="forbid")
    instruction: str = Field(
        min_length=1,
        max_length=4000,
        examples=["Add a GS1-128 barcode with the SSCC under the address block."],
    )
    version: int | None = Field(
        default=None, ge=0, description="The version to start from; default: the latest."
    )
    credential: str | None = Field(
        default=None, description="A language-model credential's ref; default: the default one."
    )


class Proposal(Model):
    base_version: int = Field(description="The version the operations apply to.")
    operations: list[dict[str, Any]] = Field(description="RFC 6902 operations, validated.")
    document: dict[str, Any] = Field(description="The document the operations give.")


class CopilotAnswer(Model):
    proposal: Proposal
    explanation: str
    findings: list[Finding] | None = Field(
        default=None, description="Lint of the proposed flow (flows only)."
    )
    preview_png_base64: str | None = Field(
        default=None,
        description="The proposed label rendered with its samples (labels only; absent when "
        "it cannot be rendered, see `preview_error`).",
    )
    preview_error: str | None = None
    saved: Literal[False] = Field(default=False, description="Copilots never save.")
    model: str


PROPOSE_TOOL = Tool(
    name="propose_patch",
    description="Propose the change as RFC 6902 JSON Patch operations against the document as "
    "given, with a short explanation for the person.",
    input_schema={
        "type": "object",
        "properties": {
            "operations": {
                "type": "array",
                "items": PATCH_OPERATION_SCHEMA,
                "maxItems": MAX_OPERATIONS,
            },
            "explanation": {"type": "string"},
        },
        "required": ["operations", "explanation"],
    },
)

SYSTEM = (
    "You are the {kind} Copilot of Etikett, a service for label design and print automation. "
    "You change the {kind} document the person shows you as they instruct, and only that. "
    "Answer through the propose_patch tool with RFC 6902 JSON Patch operations against the "
    "document exactly as given, and a short explanation in the language of the instruction. "
    "Rules: keep every `id` of {items} (never change or drop one; give new ones new, unique "
    "ids; remove a whole item with `remove /{items}/<index>`); the result must fit the JSON "
    "Schema given; use only what the registry offers. Your proposal is checked and shown to the "
    "person; nothing is saved unless they save it."
)


class Subject(NamedTuple):
    """What a Copilot works on: the document, how the model sees it, and how it is checked."""

    kind: Kind
    base_version: int
    document: dict[str, Any]
    shown: dict[str, Any]
    context: str  # schema, registry and anything else the model needs, as text
    id_collection: str
    validate: Callable[[dict[str, Any]], Any]  # raises EtikettError; answers the parsed document


def propose_label(label_id: str, request: CopilotRequest) -> CopilotAnswer:
    # Loaded here, not at the ai function's cold start.
    from etikett.domain.labels import label_validation, label_versions

    conversation = Conversation(request.credential)
    conversation.require_tools()
    # The version as parsed before in this process (versions never change): one read fewer.
    number, parsed = label_versions.label_document(label_id, request.version)
    document = parsed.model_dump(mode="json", exclude_none=True)
    subject = Subject(
        kind="label",
        base_version=number,
        document=document,
        shown=shown_label(document, conversation.shares_samples),
        context=_label_context(),
        id_collection="objects",
        validate=label_validation.validate_label,
    )
    answer, parsed = _propose(conversation, subject, request.instruction)
    try:
        answer.preview_png_base64 = base64.b64encode(_preview(parsed)).decode()
    except EtikettError as error:
        answer.preview_error = error.detail
    return answer


def propose_form(label_id: str, request: CopilotRequest) -> CopilotAnswer:
    # Loaded here, not at the ai function's cold start.
    from etikett.domain.labels import label_validation, label_versions

    conversation = Conversation(request.credential)
    conversation.require_tools()
    current, label_version, label_document = label_versions.form_with_label(
        label_id, request.version or None
    )
    shown_document = shown_label(
        label_document.model_dump(mode="json", exclude_none=True), conversation.shares_samples
    )
    subject = Subject(
        kind="form",
        base_version=current.version,
        document=current.document,
        shown=current.document,
        context=_form_schema()
        + "A form has one field per entered variable of its label (variables without an "
        "`expression`); each field's `variable` names one. The label (version "
        f"{label_version}):\n{as_json(shown_document)}",
        id_collection="fields",
        validate=lambda data: label_validation.validate_form(data, label_document),
    )
    return _propose(conversation, subject, request.instruction)[0]


def propose_flow(flow_id: str, request: CopilotRequest) -> CopilotAnswer:
    # Loaded here, not at the ai function's cold start.
    from etikett.domain.flows import flow_checks, flows

    conversation = Conversation(request.credential)
    conversation.require_tools()
    number, document = flow_version(flow_id, request.version)
    current_findings = flow_checks.lint(flows.parse(document))
    subject = Subject(
        kind="flow",
        base_version=number,
        document=document,
        shown=shown_flow(document, conversation.shares_samples),
        context=_flow_context()
        + "Lint findings of the current version:\n"
        + as_json([f.model_dump(exclude_none=True) for f in current_findings]),
        id_collection="nodes",
        validate=flows.parse_to_save,
    )
    answer, parsed = _propose(conversation, subject, request.instruction)
    answer.findings = flow_checks.lint(parsed)
    return answer


# --- what the model is told besides the document (the same for every request: made once) ------


@cache
def _label_context() -> str:
    # Loaded here, not at the ai function's cold start.
    from etikett_engine.dsl import label

    return (
        f"JSON Schema of a label document:\n{as_json(label.json_schema())}\n\n"
        f"Registry of label object types:\n{as_json(label.registry())}"
    )


@cache
def _form_schema() -> str:
    # Loaded here, not at the ai function's cold start.
    from etikett_engine.dsl import form

    return f"JSON Schema of a form document:\n{as_json(form.json_schema())}\n\n"


@cache
def _flow_context() -> str:
    # Loaded here, not at the ai function's cold start.
    from etikett_engine.dsl import flow, flow_registry

    return (
        f"JSON Schema of a flow document:\n{as_json(flow.json_schema())}\n\n"
        f"Registry of node types:\n{as_json(flow_registry.registry())}\n\n"
    )


# --- the conversation --------------------------------------------------------------------------


def _propose(
    conversation: Conversation, subject: Subject, instruction: str
) -> tuple[CopilotAnswer, Any]:
    """The validated answer and the parsed proposed document."""
    items = subject.id_collection
    system = SYSTEM.format(kind=subject.kind, items=items)
    prompt = (
        f"Instruction: {instruction}\n\n"
        f"The {subject.kind} document (version {subject.base_version}):\n"
        f"{as_json(subject.shown)}\n\n{subject.context}"
    )
    if not conversation.shares_samples:
        prompt += "\n\n(Sample values are not shared with you; leave samples as they are.)"
    turns: list[Turn] = [Turn(role="user", text=prompt)]
    request = Request(system=system, turns=tuple(turns), tool=PROPOSE_TOOL, max_tokens=8192)
    reply = conversation.ask(request)
    problem = None
    for attempt in range(2):
        call = reply.call_of(PROPOSE_TOOL.name)
        outcome = _check(subject, call)
        if not isinstance(outcome, str):
            outcome[0].model = conversation.model_name(reply)
            return outcome
        problem = outcome
        if attempt == 1:
            break
        # Tell the model once what was wrong, and let it answer again.
        turns.append(reply.as_turn())
        if call is not None:
            turns.append(Turn(role="tool", text=problem, call_id=call.id, is_error=True))
        else:
            turns.append(Turn(role="user", text=problem))
        reply = conversation.ask(
            Request(system=system, turns=tuple(turns), tool=PROPOSE_TOOL, max_tokens=8192)
        )
    raise ProviderFailed(
        f"The language model's proposal does not validate: {problem}",
        ProblemCode.AI_BAD_RESPONSE,
        reason=problem,
    )


def _check(subject: Subject, call: ToolCall | None) -> tuple[CopilotAnswer, Any] | str:
    """The answer, or why the proposal is refused (told to the model)."""
    if call is None:
        return "Answer through the propose_patch tool, with operations and an explanation."
    operations = call.input.get("operations")
    explanation = call.input.get("explanation")
    if not isinstance(operations, list) or len(operations) > MAX_OPERATIONS:
        return f"`operations` must be a list of at most {MAX_OPERATIONS} JSON Patch operations."
    try:
        changed = documents.apply_patch(
            subject.document, operations, id_collection=subject.id_collection
        )
        parsed = subject.validate(changed)
    except EtikettError as error:
        errors = error.params.get("errors")
        return error.detail + (f" Errors: {as_json(errors)}" if errors else "")
    document = parsed.model_dump(mode="json", exclude_none=True)
    answer = CopilotAnswer(
        proposal=Proposal(
            base_version=subject.base_version, operations=operations, document=document
        ),
        explanation=(explanation if isinstance(explanation, str) else "").strip()[:8000],
        model="",
    )
    return answer, parsed


def _preview(document: Any) -> bytes:
    # Loaded here, not at the ai and mcp functions' cold start.
    from etikett.domain.counters import counter_values
    from etikett_engine.render import render, resolve_variables, to_png

    serials = counter_values.next_values(document)
    values = resolve_variables(document, {}, use_samples=True, counters=serials)
    return bytes(to_png(render(document, values, counters=serials)))
