"""Versioned documents (labels, forms, flows): what their versions share. Each save makes version
`latest + 1` with its author and comment, compressed within one item's size; a patch made
against an older version, or a save that lost to another one, is a 409 `version.conflict`."""

from typing import Literal

from etikett.domain.actors import ActorKind, Invocation
from etikett_engine.errors import PayloadTooLarge, ProblemCode, VersionConflict
from etikett_engine.model import Model

DocumentName = Literal["label", "form", "flow"]


class Author(Model):
    actor: Literal["human", "service"]
    subject: str


def author(invocation: Invocation) -> tuple[ActorKind, str]:
    """The actor and subject a new version records (every save has a caller)."""
    caller = invocation.caller
    assert caller is not None
    return caller.actor, caller.subject


def within(blob: bytes, limit: int) -> bytes:
    """The compressed document, if it fits a stored version (else 413 `document.too_large`)."""
    if len(blob) > limit:
        raise PayloadTooLarge(
            f"The document is {len(blob)} bytes compressed; at most {limit}.",
            ProblemCode.DOCUMENT_TOO_LARGE,
            size=len(blob),
            limit=limit,
        )
    return blob


def check_base(base_version: int | None, latest: int, document: DocumentName) -> None:
    """A patch names the version it was made against; only the latest takes it."""
    if base_version is not None and base_version != latest:
        raise VersionConflict(
            f"The patch was made against version {base_version}, but {latest} is the latest.",
            base_version=base_version,
            latest_version=latest,
            document=document,
        )


def stale(latest: int, document: DocumentName) -> VersionConflict:
    """The conflict of a save that found `latest` no longer the latest (another save came first)."""
    return VersionConflict(
        f"Version {latest} is no longer the latest; read the document again.",
        base_version=latest,
        document=document,
    )


def saved(document: DocumentName, latest: int) -> dict[str, object]:
    """The audit details of a save after `latest`."""
    return {"document": document, "before_version": latest, "after_version": latest + 1}
