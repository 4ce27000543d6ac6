"""Flows: creating, reading, renaming and deleting them, and their documents and versions, kept
and patched exactly like label documents (ids kept, `base_version` conflicts, author, comment).
Every saved document is linted; the findings come with the answer."""

from typing import Any, Literal

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain import documents, versions
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.documents import DocumentPatch
from etikett.domain.flows import flow_checks
from etikett.domain.versions import Author
from etikett.ids import new_id
from etikett.store import flows
from etikett.store.conditions import ConditionName
from etikett.store.flows import MAX_DOCUMENT_BYTES, FlowRecord, FlowVersionRecord, pack
from etikett.store.pages import Page
from etikett.store.unit_of_work import ConditionFailed, UnitOfWork
from etikett_engine.dsl.flow import FlowDocument, malformations
from etikett_engine.errors import (
    Conflict,
    DocumentInvalid,
    InvalidRequest,
    NotFound,
    ProblemCode,
    VersionConflict,
)
from etikett_engine.flows import paths
from etikett_engine.flows.findings import Finding
from etikett_engine.model import Model

NAME = Field(min_length=1, max_length=200)
VersionStatus = Literal["draft", "deployed"]
STATUS = Field(
    description="`draft` until a deployment of the version was approved once (rolled out), "
    "then `deployed`. Flow versions need no approval of their own: a deployment's stages are "
    "approved instead."
)


class Flow(Model):
    id: str
    name: str
    description: str | None
    latest_version: int
    created_at: str
    updated_at: str


class CreatedFlow(Flow):
    """A new flow: its metadata, and the lint of the version 1 it saved."""

    version: int = Field(description="The version saved: 1.")
    findings: list[Finding] = Field(
        description="Lint of version 1 (postFlowLint gives the same); errors stop a deployment."
    )


class NewFlow(Model):
    model_config = ConfigDict(extra="forbid")
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


class FlowChange(Model):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(default=None, min_length=1, max_length=200)
    description: str | None = Field(
        default=None, max_length=2000, description="An empty string removes it."
    )


class FlowVersionEntry(Model):
    version: int
    status: VersionStatus = STATUS
    author: Author
    comment: str | None = None
    created_at: str


class FlowVersion(FlowVersionEntry):
    document: dict[str, Any]


class FlowDocumentAnswer(Model):
    flow_id: str
    version: int
    status: VersionStatus = STATUS
    document: dict[str, Any]
    findings: list[Finding] = Field(
        description="Lint of this version (postFlowLint gives the same); errors stop a deployment."
    )


def view(record: FlowRecord) -> Flow:
    return Flow(
        id=record.id,
        name=record.name,
        description=record.description,
        latest_version=record.latest_version,
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
    )


def _not_found(flow_id: str) -> NotFound:
    return NotFound(f"No flow {flow_id}.", ProblemCode.FLOW_NOT_FOUND, flow_id=flow_id)


def load(flow_id: str) -> FlowRecord:
    record = flows.get(flow_id)
    if record is None:
        raise _not_found(flow_id)
    return record


def load_version(flow_id: str, version: int) -> FlowVersionRecord:
    record = flows.get_version(flow_id, version)
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


def parse_to_save(data: Any) -> FlowDocument:
    """`parse`, and a path that could reach outside the folders a Runner's site allowed is
    refused (422 `flow.path_refused` with the lint findings): such a version is never saved,
    and no proposal offers one. A version saved before the rule shows it as a lint error."""

    document = parse(data)
    refused = paths.findings(document)
    if refused:
        raise InvalidRequest(
            f"{refused[0].message} ({len(refused)} path(s) refused)",
            ProblemCode.FLOW_PATH_REFUSED,
            findings=[finding.model_dump() for finding in refused],
        )
    return document


def document_of(record: FlowVersionRecord) -> FlowDocument:
    return FlowDocument.model_validate(record.document)


def _version_record(
    invocation: Invocation, flow_id: str, version: int, document: FlowDocument, comment: str | None
) -> FlowVersionRecord:
    blob = versions.within(
        pack(document.model_dump(mode="json", exclude_none=True)), MAX_DOCUMENT_BYTES
    )
    actor, subject = versions.author(invocation)
    return FlowVersionRecord(
        flow_id=flow_id,
        version=version,
        author_actor=actor,
        author_subject=subject,
        comment=comment,
        created_at=clock.now(),
        blob=blob,
    )


def _status(flow_id: str, version: int) -> VersionStatus:
    # Loaded here, not at the flows and mcp functions' cold start.
    from etikett.store import deployments

    return "deployed" if deployments.was_deployed(flow_id, version) else "draft"


def _answer(
    flow_id: str, version: int, document: FlowDocument, status: VersionStatus | None = None
) -> FlowDocumentAnswer:
    return FlowDocumentAnswer(
        flow_id=flow_id,
        version=version,
        status=status or _status(flow_id, version),
        document=document.model_dump(mode="json", exclude_none=True),
        findings=flow_checks.lint(document),
    )


# --- flows ---------------------------------------------------------------------------------------


def create(invocation: Invocation, request: NewFlow) -> CreatedFlow:
    document = parse_to_save(request.document or {})
    now = clock.now()
    flow_id = new_id("flw")
    flow = FlowRecord(
        id=flow_id,
        name=request.name,
        description=request.description,
        latest_version=1,
        created_at=now,
        updated_at=now,
    )
    first = _version_record(invocation, flow_id, 1, document, request.comment)
    details = {"name": request.name, "after_version": 1}
    with UnitOfWork(audit.record(invocation, flow_id, details=details)) as uow:
        flows.add(uow, flow, first)
    findings = flow_checks.lint(document)
    return CreatedFlow(**view(flow).model_dump(), version=1, findings=findings)


def get(flow_id: str) -> Flow:
    return view(load(flow_id))


def list_flows(limit: int, cursor: str | None) -> Page[Flow]:
    page = flows.page(limit, cursor)
    return Page(items=[view(r) for r in page.items], next_cursor=page.next_cursor)


def change(invocation: Invocation, flow_id: str, request: FlowChange) -> Flow:
    record = load(flow_id)
    before = view(record)
    description = record.description
    if request.description == "":
        description = None
    elif request.description is not None:
        description = request.description
    after = record._replace(
        name=request.name if request.name is not None else record.name,
        description=description,
        updated_at=clock.now(),
    )
    details = {
        "before": {"name": before.name, "description": before.description},
        "after": request.model_dump(exclude_none=True),
    }
    entry = audit.record(invocation, flow_id, details=details)
    with UnitOfWork(entry, errors={ConditionName.FLOW_EXISTS: _not_found(flow_id)}) as uow:
        flows.update(uow, record, after)
    return get(flow_id)


def delete(invocation: Invocation, flow_id: str) -> None:
    """The flow, its versions and its runs, unless a deployment uses it."""
    record = load(flow_id)
    users = flows.deployments_using(flow_id)
    if users:
        raise _in_use(flow_id, users)
    details = {"name": record.name, "latest_version": record.latest_version}
    entry = audit.record(invocation, flow_id, details=details)
    try:
        with UnitOfWork(entry) as uow:
            flows.delete(uow, record)  # refused if it went, or a claim came in meanwhile
    except ConditionFailed:
        if flows.get(flow_id) is None:
            raise _not_found(flow_id) from None
        raise _in_use(flow_id, flows.deployments_using(flow_id)) from None
    flows.delete_versions(flow_id)


def _in_use(flow_id: str, users: list[str]) -> Conflict:
    return Conflict(
        f"{flow_id} is used by the deployments {', '.join(users) or '(claimed meanwhile)'}; "
        "roll them back first.",
        ProblemCode.FLOW_IN_USE,
        flow_id=flow_id,
        deployment_ids=users,
    )


# --- documents and versions ---------------------------------------------------------------------


def get_document(flow_id: str, version: int | None = None) -> FlowDocumentAnswer:
    number = version or load(flow_id).latest_version
    return _answer(flow_id, number, document_of(load_version(flow_id, number)))


def version_document(flow_id: str, version: int | None) -> tuple[int, FlowDocument]:
    number = version or load(flow_id).latest_version
    return number, document_of(load_version(flow_id, number))


def patch_document(
    invocation: Invocation, flow_id: str, patch: DocumentPatch
) -> FlowDocumentAnswer:
    flow = load(flow_id)
    latest = flow.latest_version
    versions.check_base(patch.base_version, latest, "flow")
    current = load_version(flow_id, latest).document
    changed = documents.apply_patch(current, patch.operations, id_collection="nodes")
    document = parse_to_save(changed)
    record = _version_record(invocation, flow_id, latest + 1, document, patch.comment)
    after = flow._replace(latest_version=latest + 1, updated_at=clock.now())
    stale = versions.stale(latest, "flow")
    try:
        with UnitOfWork(
            audit.record(invocation, flow_id, details=versions.saved("flow", latest)),
            errors={ConditionName.FLOW_LATEST: stale, ConditionName.VERSION_ABSENT: stale},
        ) as uow:
            flows.add_version(uow, flow, after, record)
    except VersionConflict:
        if flows.get(flow_id) is None:
            raise _not_found(flow_id) from None
        raise
    return _answer(flow_id, latest + 1, document, "draft")


def _entry(record: FlowVersionRecord, deployed: set[int]) -> FlowVersionEntry:
    return FlowVersionEntry(
        version=record.version,
        status="deployed" if record.version in deployed else "draft",
        author=Author(actor=record.author_actor, subject=record.author_subject),
        comment=record.comment,
        created_at=clock.rfc3339(record.created_at),
    )


def list_versions(flow_id: str, limit: int, cursor: str | None) -> Page[FlowVersionEntry]:
    # Loaded here, not at the flows and mcp functions' cold start.
    from etikett.store import deployments

    load(flow_id)
    page = flows.page_versions(flow_id, limit, cursor)
    deployed = deployments.deployed_versions(flow_id) if page.items else set()
    return Page(items=[_entry(r, deployed) for r in page.items], next_cursor=page.next_cursor)


def get_version(flow_id: str, version: int) -> FlowVersion:
    load(flow_id)
    record = load_version(flow_id, version)
    deployed = {version} if _status(flow_id, version) == "deployed" else set()
    return FlowVersion(**_entry(record, deployed).model_dump(), document=record.document)
