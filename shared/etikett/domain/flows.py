"""Flows: creating, reading, renaming and deleting them, and their documents and versions, kept
and patched exactly like label documents (ids kept, `base_version` conflicts, author, comment).
Every saved document is linted; the findings come with the answer."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from etikett import clock
from etikett.domain import audit, documents, flow_checks
from etikett.domain.actors import Invocation
from etikett.domain.label_versions import DocumentPatch
from etikett.dsl.flow import FlowDocument, malformations
from etikett.errors import (
    Conflict,
    DocumentInvalid,
    NotFound,
    PayloadTooLarge,
    ProblemCode,
    VersionConflict,
)
from etikett.flows.findings import Finding
from etikett.ids import new_id
from etikett.store import flows as store
from etikett.store.pages import Page

NAME = Field(min_length=1, max_length=200)


class Author(BaseModel):
    actor: Literal["human", "service"]
    subject: str


class Flow(BaseModel):
    id: str
    name: str
    description: str | None
    latest_version: int
    created_at: str
    updated_at: str


class NewFlow(BaseModel):
    model_config = {"extra": "forbid"}
    name: str = NAME
    description: str | None = Field(default=None, max_length=2000)
    document: dict[str, Any] | None = Field(
        default=None,
        description="Version 1's document (svc://schema/flow); default an empty flow.",
        examples=[
            {
                "nodes": [
                    {
                        "id": "inbox",
                        "type": "trigger.folder",
                        "path": "/srv/labels/inbox",
                        "format": "csv",
                        "wires": ["ship"],
                    },
                    {
                        "id": "ship",
                        "type": "action.print",
                        "label": "lbl_01J8Z7Q4X9V3M2N5P6R7S8T9U0",
                        "printer": "shipping",
                        "variables": {"sscc": "record.sscc"},
                    },
                ],
                "samples": [{"sscc": "00340123450000000017"}],
            }
        ],
    )
    comment: str | None = Field(default=None, max_length=1000)


class FlowChange(BaseModel):
    model_config = {"extra": "forbid"}
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(
        default=None, max_length=2000, description="An empty string removes it."
    )


class FlowVersionEntry(BaseModel):
    version: int
    author: Author
    comment: str | None = None
    created_at: str


class FlowVersion(FlowVersionEntry):
    document: dict[str, Any]


class FlowDocumentAnswer(BaseModel):
    flow_id: str
    version: int
    document: dict[str, Any]
    findings: list[Finding] = Field(
        description="Lint of this version (postFlowLint gives the same); errors stop a deployment."
    )


def view(record: store.FlowRecord) -> Flow:
    return Flow(
        id=record.flow_id,
        name=record.name,
        description=record.description,
        latest_version=int(record.latest_version),
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
    )


def load(flow_id: str) -> store.FlowRecord:
    record = store.get(flow_id)
    if record is None:
        raise NotFound(f"No flow {flow_id}.", ProblemCode.FLOW_NOT_FOUND, flow_id=flow_id)
    return record


def load_version(flow_id: str, version: int) -> store.FlowVersionRecord:
    record = store.get_version(flow_id, version)
    if record is None:
        raise NotFound(
            f"{flow_id} has no version {version}.",
            ProblemCode.FLOW_VERSION_NOT_FOUND,
            flow_id=flow_id,
            version=version,
        )
    return record


def parse(data: Any) -> FlowDocument:
    """The document, or `document.invalid` naming the JSON path where it is malformed."""
    document = documents.validate(FlowDocument, data)
    problems = malformations(document)
    if problems:
        paths = ", ".join(path for path, _ in problems)
        raise DocumentInvalid(
            f"The document is invalid at {paths}: {problems[0][1]}.",
            errors=[{"path": p, "message": m, "type": "value_error"} for p, m in problems],
        )
    return document


def document_of(record: store.FlowVersionRecord) -> FlowDocument:
    return FlowDocument.model_validate(store.unpack(record.document))


def _version_record(
    invocation: Invocation, flow_id: str, version: int, document: FlowDocument, comment: str | None
) -> store.FlowVersionRecord:
    blob = store.pack(document.model_dump(mode="json", exclude_none=True))
    if len(blob) > store.MAX_DOCUMENT_BYTES:
        raise PayloadTooLarge(
            f"The document is {len(blob)} bytes compressed; at most {store.MAX_DOCUMENT_BYTES}.",
            ProblemCode.DOCUMENT_TOO_LARGE,
            size=len(blob),
            limit=store.MAX_DOCUMENT_BYTES,
        )
    caller = invocation.caller
    assert caller is not None
    return store.FlowVersionRecord(
        flow_id=flow_id,
        sk=store.version_sk(version),
        version=version,
        author_actor=caller.actor,
        author_subject=caller.subject,
        comment=comment,
        created_at=clock.now(),
        document=blob,
    )


def _answer(flow_id: str, version: int, document: FlowDocument) -> FlowDocumentAnswer:
    return FlowDocumentAnswer(
        flow_id=flow_id,
        version=version,
        document=document.model_dump(mode="json", exclude_none=True),
        findings=flow_checks.lint(document),
    )


# --- flows ---------------------------------------------------------------------------------------


def create(invocation: Invocation, request: NewFlow) -> Flow:
    document = parse(request.document or {})
    now = clock.now()
    flow_id = new_id("flw")
    flow = store.FlowRecord(
        flow_id=flow_id,
        sk=store.META_SK,
        kind="flow",
        name=request.name,
        name_key=store.name_key(request.name, flow_id),
        description=request.description,
        latest_version=1,
        created_at=now,
        updated_at=now,
    )
    first = _version_record(invocation, flow_id, 1, document, request.comment)
    store.create(
        flow,
        first,
        audit.entry(invocation, flow_id, details={"name": request.name, "after_version": 1}),
    )
    return view(flow)


def get(flow_id: str) -> Flow:
    return view(load(flow_id))


def list_flows(limit: int, cursor: str | None) -> Page[Flow]:
    page = store.list_flows(limit, cursor)
    return Page(items=[view(r) for r in page.items], next_cursor=page.next_cursor)


def change(invocation: Invocation, flow_id: str, request: FlowChange) -> Flow:
    record = load(flow_id)
    before = view(record)
    clear = request.description == ""
    try:
        store.update(
            record,
            name=request.name,
            description=request.description if not clear else None,
            clear_description=clear,
            at=clock.now(),
            audit=audit.entry(
                invocation,
                flow_id,
                details={
                    "before": {"name": before.name, "description": before.description},
                    "after": request.model_dump(exclude_none=True),
                },
            ),
        )
    except store.FlowGone:
        raise NotFound(f"No flow {flow_id}.", ProblemCode.FLOW_NOT_FOUND, flow_id=flow_id) from None
    return get(flow_id)


def delete(invocation: Invocation, flow_id: str) -> None:
    record = load(flow_id)
    try:
        store.delete(
            record,
            audit.entry(
                invocation,
                flow_id,
                details={"name": record.name, "latest_version": int(record.latest_version)},
            ),
        )
    except store.FlowInUse as used:
        raise Conflict(
            f"{flow_id} is used by the deployments {', '.join(used.deployment_ids)}; roll them "
            "back first.",
            ProblemCode.FLOW_IN_USE,
            flow_id=flow_id,
            deployment_ids=used.deployment_ids,
        ) from None
    except store.FlowGone:
        raise NotFound(f"No flow {flow_id}.", ProblemCode.FLOW_NOT_FOUND, flow_id=flow_id) from None


# --- documents and versions ---------------------------------------------------------------------


def get_document(flow_id: str, version: int | None = None) -> FlowDocumentAnswer:
    number = version or int(load(flow_id).latest_version)
    return _answer(flow_id, number, document_of(load_version(flow_id, number)))


def version_document(flow_id: str, version: int | None) -> tuple[int, FlowDocument]:
    number = version or int(load(flow_id).latest_version)
    return number, document_of(load_version(flow_id, number))


def patch_document(
    invocation: Invocation, flow_id: str, patch: DocumentPatch
) -> FlowDocumentAnswer:
    flow = load(flow_id)
    latest = int(flow.latest_version)
    if patch.base_version is not None and patch.base_version != latest:
        raise VersionConflict(
            f"The patch was made against version {patch.base_version}, but {latest} is the latest.",
            base_version=patch.base_version,
            latest_version=latest,
            document="flow",
        )
    current = store.unpack(load_version(flow_id, latest).document)
    changed = documents.apply_patch(current, patch.operations, id_collection="nodes")
    document = parse(changed)
    record = _version_record(invocation, flow_id, latest + 1, document, patch.comment)
    try:
        store.add_version(
            flow,
            latest,
            record,
            clock.now(),
            audit.entry(
                invocation,
                flow_id,
                details={"document": "flow", "before_version": latest, "after_version": latest + 1},
            ),
        )
    except store.StaleVersion:
        raise VersionConflict(
            f"Version {latest} is no longer the latest; read the document again.",
            base_version=latest,
            document="flow",
        ) from None
    except store.FlowGone:
        raise NotFound(f"No flow {flow_id}.", ProblemCode.FLOW_NOT_FOUND, flow_id=flow_id) from None
    return _answer(flow_id, latest + 1, document)


def _entry(record: store.FlowVersionRecord) -> FlowVersionEntry:
    return FlowVersionEntry(
        version=int(record.version),
        author=Author(actor=record.author_actor, subject=record.author_subject),  # type: ignore[arg-type]
        comment=record.comment,
        created_at=clock.rfc3339(record.created_at),
    )


def list_versions(flow_id: str, limit: int, cursor: str | None) -> Page[FlowVersionEntry]:
    load(flow_id)
    page = store.list_versions(flow_id, limit, cursor)
    return Page(items=[_entry(r) for r in page.items], next_cursor=page.next_cursor)


def get_version(flow_id: str, version: int) -> FlowVersion:
    load(flow_id)
    record = load_version(flow_id, version)
    return FlowVersion(**_entry(record).model_dump(), document=store.unpack(record.document))
