"""What the AI helpers share (lint explanations, audit-log questions, the Copilots): which model a
request asks and within what time, how documents are shown to it (sample values only when the
credential shares them), and checking the JSON Patch operations it suggests."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

from etikett.ai import client
from etikett.ai.conversation import Reply, Request
from etikett.domain import documents
from etikett.settings import get_settings
from etikett_engine.dsl.flow import FlowDocument
from etikett_engine.errors import EtikettError, NotFound, ProblemCode, ProviderFailed

# The whole conversation with the model (one or two requests) fits API Gateway's 30 s.
CONVERSATION_SECONDS = 25.0
MAX_SUGGESTIONS = 50
MAX_TEXT = 8000

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
        # Loaded here, not at the ai function's cold start.
        from etikett.domain.credentials import opening

        self.record, self.endpoint = opening.language_model(credential)
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


def flow_version(flow_id: str, version: int | None) -> tuple[int, dict[str, Any]]:
    """A flow version's document (one read: the flow's when the latest is asked for and was read
    before, else the version's): `flow.not_found` for an unknown flow, `flow.version_not_found`
    for an unknown version of a known one. Versions never change, so a parsed one is kept."""
    # Loaded here, not at the ai function's cold start.
    from etikett.domain.flows import flows

    try:
        if version:
            kept = None  # the version's own read tells whether it (and its flow) still exist
        else:
            version = int(flows.load(flow_id).latest_version)
            kept = _flow_versions.get((flow_id, version))
        if kept is None:
            kept = flows.document_of(flows.load_version(flow_id, version))
            _keep_flow_version(flow_id, version, kept)
    except NotFound as missing:
        if missing.code == ProblemCode.FLOW_VERSION_NOT_FOUND:
            flows.load(flow_id)
        raise
    return version, kept.model_dump(mode="json", exclude_none=True)


_flow_versions: dict[tuple[str, int], FlowDocument] = {}
MAX_FLOW_VERSIONS = 256


def _keep_flow_version(flow_id: str, version: int, document: FlowDocument) -> None:
    if len(_flow_versions) >= MAX_FLOW_VERSIONS:
        _flow_versions.pop(next(iter(_flow_versions)), None)
    _flow_versions[(flow_id, version)] = document
