"""Label and form documents and their versions: reading, patching into a new version, release.

Every saved version records its author. While `aiFreigabePflicht` is on, a version authored by a
service actor (an agent) can only be approved by a person; a person's version by any approver.
Approving makes a version the released one (the previous one is retired) and records a
`label.approved` event in the outbox, in the same transaction.
"""

from typing import Any, Literal

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain import documents, versions
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.documents import DocumentPatch as DocumentPatch
from etikett.domain.labels.label_records import load_label, load_version
from etikett.domain.labels.label_validation import derived_form, validate_form, validate_label
from etikett.domain.users import policies
from etikett.domain.versions import Author
from etikett.store import events, labels
from etikett.store.conditions import ConditionName
from etikett.store.labels import MAX_DOCUMENT_BYTES, DocumentKind, LabelRecord, VersionRecord, pack
from etikett.store.pages import Page
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.dsl.preflight import LabelFinding
from etikett_engine.errors import (
    HumanRequired,
)
from etikett_engine.model import Model

VersionStatus = Literal["draft", "approved", "retired"]


class VersionEntry(Model):
    version: int
    status: VersionStatus
    author: Author
    created_at: str
    comment: str | None = None
    status_changed_at: str | None = None
    status_changed_by: str | None = None
    status_comment: str | None = Field(
        default=None,
        description="The comment given with the latest status change, e.g. the approval's.",
    )


class VersionWithDocument(VersionEntry):
    document: dict[str, Any]


class DocumentAnswer(Model):
    version: int = Field(description="The version read or saved (0: a form derived, not saved).")
    status: VersionStatus | Literal["derived"]
    document: dict[str, Any]
    findings: list[LabelFinding] = Field(
        default_factory=list,
        description="Label documents: the version's preflight findings (errors block approval "
        "and printing). Empty for forms.",
    )


class StatusChange(Model):
    model_config = ConfigDict(extra="forbid")
    version: int = Field(ge=1)
    status: VersionStatus
    comment: str | None = Field(default=None, max_length=1000)
    document: DocumentKind = Field(
        default="label", description="Whose version: the label's or its form's."
    )


# --- versions --------------------------------------------------------------------------------


def new_version_record(
    invocation: Invocation,
    label_id: str,
    kind: DocumentKind,
    version: int,
    document: dict[str, Any],
    comment: str | None,
) -> VersionRecord:
    blob = versions.within(pack(document), MAX_DOCUMENT_BYTES)
    actor, subject = versions.author(invocation)
    return VersionRecord(
        label_id=label_id,
        document_kind=kind,
        version=version,
        status="draft",
        author_actor=actor,
        author_subject=subject,
        comment=comment,
        created_at=clock.now(),
        status_changed_at=None,
        status_changed_by=None,
        blob=blob,
    )


def _entry(record: VersionRecord) -> VersionEntry:
    return VersionEntry(
        version=record.version,
        status=record.status,
        author=Author(actor=record.author_actor, subject=record.author_subject),
        created_at=clock.rfc3339(record.created_at),
        comment=record.comment,
        status_changed_at=clock.rfc3339(record.status_changed_at)
        if record.status_changed_at
        else None,
        status_changed_by=record.status_changed_by,
        status_comment=record.status_comment,
    )


def get_document(
    label_id: str, version: int | None = None, *, with_findings: bool = False
) -> DocumentAnswer:
    meta = load_label(label_id)
    record = load_version(label_id, "label", version or meta.latest_version)
    answer = DocumentAnswer(
        version=record.version,
        status=record.status,
        document=record.document,
    )
    if with_findings:
        # Preflight loads the renderer: only when findings are asked for, or for an approval.
        from etikett.domain.labels import preflight

        parsed = LabelDocument.model_validate(answer.document)
        answer.findings = preflight.findings(label_id, answer.version, parsed)
    return answer


def label_document(label_id: str, version: int | None = None) -> tuple[int, LabelDocument]:
    """The version's number and parsed document (by default the latest); a version read before
    in this process is not read again (`parsed_versions`)."""
    # The label is read also when the version is kept: a deleted label's versions are gone.
    return _label_document(load_label(label_id), version)


def _label_document(meta: LabelRecord, version: int | None) -> tuple[int, LabelDocument]:
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett.domain.labels import parsed_versions

    number = version or meta.latest_version
    document = parsed_versions.kept(meta.id, number)
    if document is None:
        document = parsed_versions.parsed(load_version(meta.id, "label", number))
    return number, document


def list_versions(
    label_id: str, kind: DocumentKind, limit: int, cursor: str | None
) -> Page[VersionEntry]:
    load_label(label_id)
    found = labels.page_versions(label_id, kind, limit, cursor)
    return Page(items=[_entry(record) for record in found.items], next_cursor=found.next_cursor)


def get_version(label_id: str, version: int) -> VersionWithDocument:
    load_label(label_id)
    record = load_version(label_id, "label", version)
    return VersionWithDocument(**_entry(record).model_dump(), document=record.document)


def _save_new_version(
    invocation: Invocation,
    meta: LabelRecord,
    kind: DocumentKind,
    document: dict[str, Any],
    comment: str | None,
    **label_changes: Any,
) -> VersionRecord:
    """Version `latest + 1` of `kind`, if nobody saved one meanwhile (else 409)."""
    latest = meta.latest(kind)
    record = new_version_record(invocation, meta.id, kind, latest + 1, document, comment)
    after = meta.with_latest(kind, latest + 1)._replace(**label_changes, updated_at=clock.now())
    conflict = versions.stale(latest, kind)
    entry = audit.record(invocation, meta.id, details=versions.saved(kind, latest))
    with UnitOfWork(
        entry,
        errors={ConditionName.VERSION_LATEST: conflict, ConditionName.VERSION_ABSENT: conflict},
    ) as uow:
        labels.add_version(uow, meta, after, record)
    return record


def patch_document(invocation: Invocation, label_id: str, patch: DocumentPatch) -> DocumentAnswer:
    meta = load_label(label_id)
    latest = meta.latest_version
    versions.check_base(patch.base_version, latest, "label")
    current = load_version(label_id, "label", latest).document
    changed = documents.apply_patch(current, patch.operations, id_collection="objects")
    parsed = validate_label(changed)
    saved = _save_new_version(
        invocation,
        meta,
        "label",
        parsed.model_dump(mode="json", exclude_none=True),
        patch.comment,
        width_mm=parsed.size.width_mm,
        height_mm=parsed.size.height_mm,
        dpi=parsed.dpi,
    )
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett.domain.labels import preflight

    return DocumentAnswer(
        version=saved.version,
        status="draft",
        document=saved.document,
        findings=preflight.findings(label_id, saved.version, parsed),
    )


# --- forms -----------------------------------------------------------------------------------


def get_form(label_id: str, version: int | None = None) -> DocumentAnswer:
    return _form(load_label(label_id), version)


def form_with_label(
    label_id: str, version: int | None = None
) -> tuple[DocumentAnswer, int, LabelDocument]:
    """The form and the label's latest version it belongs to, from one read of the label."""
    meta = load_label(label_id)
    label_number, label = _label_document(meta, None)
    return _form(meta, version, label), label_number, label


def _form(
    meta: LabelRecord, version: int | None, label: LabelDocument | None = None
) -> DocumentAnswer:
    """The authored form (that version, or the latest), else the one derived from the latest
    label version (version 0)."""
    latest_form = meta.form_latest_version
    if version is not None or latest_form > 0:
        record = load_version(meta.id, "form", version or latest_form)
        return DocumentAnswer(
            version=record.version, status=record.status, document=record.document
        )
    if label is None:
        _, label = _label_document(meta, None)
    return DocumentAnswer(
        version=0,
        status="derived",
        document=derived_form(label).model_dump(mode="json", exclude_none=True),
    )


def patch_form(invocation: Invocation, label_id: str, patch: DocumentPatch) -> DocumentAnswer:
    """Patches the authored form, or the derived one when none is authored yet (version 0)."""
    meta = load_label(label_id)
    versions.check_base(patch.base_version, meta.form_latest_version, "form")
    current = get_form(label_id).document
    changed = documents.apply_patch(current, patch.operations, id_collection="fields")
    _, label = label_document(label_id)
    parsed = validate_form(changed, label)
    saved = _save_new_version(
        invocation, meta, "form", parsed.model_dump(mode="json", exclude_none=True), patch.comment
    )
    return DocumentAnswer(version=saved.version, status="draft", document=saved.document)


# --- release ---------------------------------------------------------------------------------


def set_status(invocation: Invocation, label_id: str, change: StatusChange) -> VersionEntry:
    meta = load_label(label_id)
    kind = change.document
    record = load_version(label_id, kind, change.version)
    caller = invocation.caller
    assert caller is not None
    released = meta.released(kind)
    if record.status == change.status:
        return _entry(record)
    if change.status == "approved" and kind == "label":
        # Preflight loads the renderer: only when findings are asked for, or for an approval.
        from etikett.domain.labels import preflight

        document = LabelDocument.model_validate(record.document)
        preflight.ensure_no_errors(label_id, change.version, document, doing="approved")
    if (
        change.status == "approved"
        and record.author_actor == "service"
        and caller.actor != "human"
        and policies.enabled(policies.AI_APPROVAL)
    ):
        raise HumanRequired(
            f"Version {change.version} was authored by an agent ({record.author_subject}); while "
            f"{policies.AI_APPROVAL} is on, a person must approve it.",
            label_id=label_id,
            version=change.version,
            policy=policies.AI_APPROVAL,
        )

    now = clock.now()
    if change.status == "approved":
        now_released: int | None = change.version
    elif released == change.version:
        now_released = None
    else:
        now_released = released
    entry = audit.record(
        invocation,
        label_id,
        details={
            "document": kind,
            "version": change.version,
            "before": record.status,
            "after": change.status,
            "comment": change.comment,
        },
    )
    with UnitOfWork(entry) as uow:
        labels.set_version_status(uow, record, change.status, now, caller.subject, change.comment)
        if change.status == "approved" and released and released != change.version:
            previous = load_version(label_id, kind, released)
            labels.set_version_status(uow, previous, "retired", now, caller.subject)
        if now_released != released:
            after = meta.with_released(kind, now_released)._replace(updated_at=now)
            labels.release(uow, meta, after, kind)
        if change.status == "approved" and kind == "label":
            events.add(
                uow,
                events.new_event(
                    "label.approved",
                    label_id,
                    {
                        "label_id": label_id,
                        "version": change.version,
                        "name": meta.name,
                        "approved_by": {"actor": caller.actor, "subject": caller.subject},
                        "author": {"actor": record.author_actor, "subject": record.author_subject},
                        "previous_version": released,
                    },
                    at=now,
                ),
            )
    return _entry(load_version(label_id, kind, change.version))
