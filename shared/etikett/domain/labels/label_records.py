"""A label's records as other aggregates read them (printing, flows): the label and its
versions, or label.not_found / label.version_not_found. No request or answer models, so a
function that only looks labels up does not load the label API's."""

from __future__ import annotations

from etikett.store import labels
from etikett.store.labels import DocumentKind, LabelRecord, VersionRecord
from etikett_engine.errors import NotFound, ProblemCode


def existing_label(label_id: str, record: LabelRecord | None) -> LabelRecord:
    """`record` as read for `label_id`; label.not_found if there was none."""
    if record is None:
        raise NotFound(f"No label {label_id}.", ProblemCode.LABEL_NOT_FOUND, label_id=label_id)
    return record


def load_label(label_id: str) -> LabelRecord:
    return existing_label(label_id, labels.get(label_id))


def load_version(label_id: str, kind: DocumentKind, version: int) -> VersionRecord:
    return existing_version(label_id, kind, version, labels.get_version(label_id, kind, version))


def existing_version(
    label_id: str, kind: DocumentKind, version: int, record: VersionRecord | None
) -> VersionRecord:
    """`record` as read for that version; label.version_not_found if there was none."""
    if record is None:
        raise NotFound(
            f"{label_id} has no {kind} version {version}.",
            ProblemCode.LABEL_VERSION_NOT_FOUND,
            label_id=label_id,
            version=version,
            document=kind,
        )
    return record
