"""AI helpers that answer questions: a lint finding explained in plain words (with suggested JSON
Patch operations that were checked to apply), and questions over the audit log (citing only
entries that were given to the model). Shared by the Copilots: which model to ask, how documents
are shown to it (sample values only when the credential shares them), and checking patches."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from etikett.ai import client
from etikett.ai.conversation import Reply, Request, Tool, Turn
from etikett.domain import documents
from etikett.errors import EtikettError, NotFound, ProblemCode, ProviderFailed

# The whole conversation with the model (one or two requests) fits API Gateway's 30 s.
CONVERSATION_SECONDS = 25.0
MAX_SUGGESTIONS = 50
MAX_TEXT = 8000
MAX_LOG_ENTRIES = 200
MAX_LOG_PAGES = 5
MAX_DETAILS = 300
AUDIT_ID = re.compile(r"\baud_[0-9A-HJKMNP-TV-Z]{26}\b")
TARGET = r"^(flw|lbl)_[0-9A-Za-z]{1,40}(@[1-9][0-9]{0,8})?$"

PATCH_OPERATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "op": {"enum": ["add", "remove", "replace", "move", "copy", "test"]},
        "path": {"type": "string", "description": "JSON Pointer into the document"},
        "value": {"description": "for add, replace, test"},
        "from": {"type": "string", "description": "for move, copy"},
    },
    "required": ["op", "path"],
}


# --- the model a request uses --------------------------------------------------------------------


class Conversation:
    """One AI operation's exchange with its model: the credential, a shared deadline."""

    def __init__(self, credential: str | None) -> None:
        from etikett.domain import credentials
        from etikett.settings import get_settings

        self.record, self.endpoint = credentials.language_model(credential)
        self.started = time.monotonic()
        self.timeout = get_settings().ai_timeout_seconds

    @property
    def shares_samples(self) -> bool:
        return self.record.share_sample_values

    def require_tools(self) -> None:
        if not client.supports_tools(self.endpoint):
            raise EtikettError(
                f"The credential {self.record.ref!r} uses the {self.endpoint.provider} format, "
                "which has no tool use; Copilots need anthropic-messages or openai-chat.",
                ProblemCode.AI_PROVIDER_UNSUPPORTED,
                ref=self.record.ref,
                provider=self.endpoint.provider,
            )

    def remaining(self) -> float:
        return CONVERSATION_SECONDS - (time.monotonic() - self.started)

    def ask(self, request: Request) -> Reply:
        remaining = self.remaining()
        if remaining < 1:
            raise ProviderFailed(
                "No time is left for another request to the language model.",
                ProblemCode.AI_UNREACHABLE,
                provider=self.endpoint.provider,
            )
        limits = client.Limits(timeout=min(self.timeout, remaining), deadline=remaining)
        return client.complete(self.endpoint, request, limits=limits)

    def model_name(self, reply: Reply) -> str:
        return reply.model or self.endpoint.model


# --- documents as the model sees them ------------------------------------------------------------


def shown_label(document: dict[str, Any], share_samples: bool) -> dict[str, Any]:
    """A label document for a model: without the variables' `sample` values unless shared."""
    if share_samples:
        return document
    shown = dict(document)
    shown["variables"] = [
        {key: value for key, value in variable.items() if key != "sample"}
        if isinstance(variable, dict)
        else variable
        for variable in document.get("variables") or []
    ]
    return shown


def shown_flow(document: dict[str, Any], share_samples: bool) -> dict[str, Any]:
    """A flow document for a model: without its pinned `samples` unless shared."""
    if share_samples:
        return document
    return {key: value for key, value in document.items() if key != "samples"}


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --- patches -------------------------------------------------------------------------------------


def applying(
    document: dict[str, Any],
    operations: list[Any],
    id_collection: str,
    check: Callable[[dict[str, Any]], Any],
) -> tuple[list[dict[str, Any]], int]:
    """The operations that apply one after another and keep the document valid and its ids; the
    others are dropped. Answers the kept ones and how many were dropped."""
    kept: list[dict[str, Any]] = []
    dropped = 0
    current = document
    for operation in operations[:MAX_SUGGESTIONS]:
        if not isinstance(operation, dict):
            dropped += 1
            continue
        try:
            changed = documents.apply_patch(current, [operation], id_collection=id_collection)
            check(changed)
        except EtikettError:
            dropped += 1
            continue
        kept.append(operation)
        current = changed
    return kept, dropped + max(0, len(operations) - MAX_SUGGESTIONS)


# --- explaining a lint finding -------------------------------------------------------------------


class LintFinding(BaseModel):
    """A finding as lint (or a `document.invalid` error) reports it."""

    model_config = ConfigDict(extra="allow")
    code: str | None = Field(default=None, max_length=200, examples=["flow.cel_invalid"])
    severity: str | None = Field(default=None, max_length=20)
    path: str | None = Field(default=None, max_length=1000, examples=["/nodes/2/condition"])
    node_id: str | None = Field(default=None, max_length=200)
    message: str = Field(min_length=1, max_length=4000)
    params: dict[str, Any] = Field(default_factory=dict)


class LintExplanationRequest(BaseModel):
    model_config = {"extra": "forbid"}
    target: str = Field(
        pattern=TARGET,
        description="The document the finding is about: `flw_…@N` or `lbl_…@N` (without `@N`: "
        "the latest version).",
        examples=["flw_01JABCDEFGHJKMNPQRSTVWXYZ0@3"],
    )
    finding: LintFinding
    credential: str | None = Field(
        default=None, description="A language-model credential's ref; default: the default one."
    )


class LintExplanation(BaseModel):
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
    target: str,
) -> tuple[Literal["flow", "label"], dict[str, Any], str, Callable[[dict[str, Any]], Any]]:
    reference, _, number = target.partition("@")
    version = int(number) if number else None
    if reference.startswith("flw_"):
        from etikett.domain import flows

        _, document = flow_version(reference, version)
        return "flow", document, "nodes", flows.parse
    from etikett.domain import label_versions

    label = label_versions.get_document(reference, version)
    return "label", label.document, "objects", label_versions.validate_label


def flow_version(flow_id: str, version: int | None) -> tuple[int, dict[str, Any]]:
    """A flow version's document (one read when the version is named): `flow.not_found` for an
    unknown flow, `flow.version_not_found` for an unknown version of a known one."""
    from etikett.domain import flows

    try:
        number = version or int(flows.load(flow_id).latest_version)
        record = flows.load_version(flow_id, number)
    except NotFound as missing:
        if missing.code == ProblemCode.FLOW_VERSION_NOT_FOUND:
            flows.load(flow_id)
        raise
    return number, flows.document_of(record).model_dump(mode="json", exclude_none=True)


def explain_finding(request: LintExplanationRequest) -> LintExplanation:
    kind, document, id_collection, check = _target_document(request.target)
    conversation = Conversation(request.credential)
    share = conversation.shares_samples
    shown = shown_flow(document, share) if kind == "flow" else shown_label(document, share)
    context: dict[str, Any] = {}
    if kind == "flow":
        context["node_type"] = _node_type_of(document, request.finding)
    prompt = (
        f"The {kind} document ({request.target}):\n{as_json(shown)}\n\n"
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
    from etikett.dsl import flow

    return list(flow.registry()["items"])


def _explanation_of(reply: Reply) -> tuple[str, list[Any]]:
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


# --- questions over the audit log ----------------------------------------------------------------


class LogFilters(BaseModel):
    model_config = {"extra": "forbid"}
    actor: Literal["human", "service", "anonymous"] | None = Field(
        default=None, description="The kind of actor: a person, an agent, or anonymous."
    )
    subject: str | None = Field(
        default=None, min_length=1, max_length=200, description="A username or token subject."
    )
    operation: str | None = Field(
        default=None, min_length=1, max_length=100, description="An operationId."
    )
    target: str | None = Field(
        default=None, min_length=1, max_length=200, description="The id acted on."
    )
    since: datetime | None = Field(default=None, description="RFC 3339, inclusive.")
    until: datetime | None = Field(default=None, description="RFC 3339, inclusive.")


class LogQuestion(BaseModel):
    model_config = {"extra": "forbid"}
    question: str = Field(min_length=1, max_length=2000)
    filters: LogFilters = Field(default_factory=LogFilters)
    credential: str | None = Field(
        default=None, description="A language-model credential's ref; default: the default one."
    )


class LogAnswer(BaseModel):
    answer: str
    cited_entry_ids: list[str] = Field(
        description="Ids of audit entries the answer rests on: only entries that matched the "
        "filters and were given to the model (an id the model made up is removed)."
    )
    entries_considered: int = Field(
        description=f"How many matching entries (newest first, at most {MAX_LOG_ENTRIES}) the "
        "model was given."
    )
    model: str


ANSWER_TOOL = Tool(
    name="answer_question",
    description="Answer the question from the audit entries given, citing their ids.",
    input_schema={
        "type": "object",
        "properties": {
            "answer": {"type": "string"},
            "cited_entry_ids": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["answer", "cited_entry_ids"],
    },
)

LOG_SYSTEM = (
    "You answer questions about the audit log of Etikett (label design and printing). You get "
    "the entries that match the person's filters, newest first, one JSON object per line: id, "
    "time, actor kind, subject, operation, target, outcome, problem code, details. Answer only "
    "from these entries; if they do not answer the question, say so. Cite the ids of the "
    "entries you rely on (never an id that is not in the list). Answer through the "
    "answer_question tool, in the language of the question."
)


def _matching_entries(filters: LogFilters) -> list[Any]:
    from etikett.domain import audit

    entries: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_LOG_PAGES):
        page = audit.list_entries(
            actor=filters.subject,
            operation=filters.operation,
            target=filters.target,
            since=filters.since,
            until=filters.until,
            limit=MAX_LOG_ENTRIES,
            cursor=cursor,
        )
        for entry in page.items:
            if filters.actor is None or entry.actor == filters.actor:
                entries.append(entry)
                if len(entries) == MAX_LOG_ENTRIES:
                    return entries
        cursor = page.next_cursor
        if cursor is None:
            break
    return entries


def compact(entry: Any) -> str:
    """One line per entry: what a model needs, nothing more (details cut short)."""
    line: dict[str, Any] = {
        "id": entry.id,
        "at": entry.at,
        "actor": entry.actor,
        "subject": entry.subject,
        "op": entry.operation_id,
    }
    if entry.target_id:
        line["target"] = entry.target_id
    line["outcome"] = entry.outcome
    if entry.code:
        line["code"] = entry.code
    if entry.details:
        details = as_json(entry.details)
        line["details"] = (
            entry.details if len(details) <= MAX_DETAILS else details[:MAX_DETAILS] + "…"
        )
    return as_json(line)


def answer_question(request: LogQuestion) -> LogAnswer:
    conversation = Conversation(request.credential)
    entries = _matching_entries(request.filters)
    if not entries:
        return LogAnswer(
            answer="No audit entries match these filters, so there is nothing to answer from.",
            cited_entry_ids=[],
            entries_considered=0,
            model=conversation.endpoint.model,
        )
    given = [entry.id for entry in entries]
    filters = request.filters.model_dump(mode="json", exclude_none=True)
    prompt = (
        f"Question: {request.question}\n\nFilters: {as_json(filters)}\n\n"
        f"{len(entries)} entries, newest first:\n" + "\n".join(compact(e) for e in entries)
    )
    reply = conversation.ask(
        Request(system=LOG_SYSTEM, turns=(Turn(role="user", text=prompt),), tool=ANSWER_TOOL)
    )
    from etikett.ai.generic_json import json_object_in

    call = reply.call_of(ANSWER_TOOL.name)
    data = call.input if call is not None else json_object_in(reply.text)
    if data is not None and isinstance(data.get("answer"), str) and data["answer"].strip():
        text = data["answer"]
        claimed = data.get("cited_entry_ids")
        claimed = [c for c in claimed if isinstance(c, str)] if isinstance(claimed, list) else []
    else:
        text = reply.text
        claimed = []
    if not text.strip():
        raise ProviderFailed("The language model answered nothing.", ProblemCode.AI_BAD_RESPONSE)
    known = set(given)
    cited: list[str] = []
    for entry_id in [*claimed, *AUDIT_ID.findall(text)]:
        if entry_id in known and entry_id not in cited:
            cited.append(entry_id)
    # An id the model made up is not an entry: it leaves the answer too.
    text = AUDIT_ID.sub(lambda m: m.group(0) if m.group(0) in known else "[unknown entry]", text)
    return LogAnswer(
        answer=text.strip()[:MAX_TEXT],
        cited_entry_ids=cited,
        entries_considered=len(entries),
        model=conversation.model_name(reply),
    )
