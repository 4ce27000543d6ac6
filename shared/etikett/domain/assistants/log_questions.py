"""Questions over the audit log answered by a language model: it is given the entries that match
the question's filters, and its answer may cite only those.
"""

import re
from datetime import datetime
from typing import Any, Literal

from pydantic import ConfigDict, Field

from etikett.ai.conversation import Request, Tool, Turn
from etikett.domain.assistants.assistant import (
    MAX_TEXT,
    Conversation,
    as_json,
)
from etikett.ids import id_pattern
from etikett_engine.errors import ProblemCode, ProviderFailed
from etikett_engine.model import Model

MAX_LOG_ENTRIES = 200
MAX_LOG_PAGES = 5
MAX_DETAILS = 300
AUDIT_ID = re.compile(rf"\b{id_pattern('aud')}\b")


class LogFilters(Model):
    model_config = ConfigDict(extra="forbid")
    actor: Literal["human", "service", "anonymous", "system"] | None = Field(
        default=None,
        description="The kind of actor: a person, an agent, anonymous, or the service itself "
        "(automatic steps such as a stage becoming active).",
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


class LogQuestion(Model):
    model_config = ConfigDict(extra="forbid")
    question: str = Field(min_length=1, max_length=2000)
    filters: LogFilters = Field(default_factory=LogFilters)
    credential: str | None = Field(
        default=None, description="A language-model credential's ref; default: the default one."
    )


class LogAnswer(Model):
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
    # Loaded here, not at the ai function's cold start.
    from etikett.domain.audit import audit_entries

    entries: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_LOG_PAGES):
        page = audit_entries.list_entries(
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
    # Loaded here, not at the ai and mcp functions' cold start.
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
