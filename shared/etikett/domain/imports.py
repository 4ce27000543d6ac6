"""Import: a ZPL or gLabels file becomes new labels, each with version 1 a draft.

The whole file is converted and every label document validated (and sized for storage) before
the first label is created, so a refused file creates nothing. Each label is then created through
the ordinary creation path, with its audit entry. What could not be carried over is in `report`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from etikett.domain import labels
from etikett.domain.actors import Invocation
from etikett.errors import EtikettError, PayloadTooLarge, ProblemCode
from etikett.model import Model

DEFAULT_DPI = 203


class ImportSource(Model):
    name: str = Field(description="The uploaded file's name.")
    format: Literal["zpl", "glabels"]


class ImportedDocument(Model):
    kind: Literal["label"] = "label"
    label_id: str
    version: int = Field(description="Always 1, a draft.")
    name: str


class ReportEntry(Model):
    line: int | None = Field(default=None, description="Line of the file (ZPL).")
    element: str | None = Field(default=None, description="Element path (gLabels XML).")
    document: int | None = Field(
        default=None, description="Index into `documents` of the label concerned."
    )
    severity: Literal["warning", "info"]
    message: str = Field(description="What was not carried over exactly, in plain words.")


class ImportAnswer(Model):
    source: ImportSource
    documents: list[ImportedDocument]
    report: list[ReportEntry]


def import_file(invocation: Invocation, name: str, data: bytes, dpi: int) -> ImportAnswer:
    from etikett.domain.label_validation import validate_label
    from etikett.importers import convert, refuse
    from etikett.settings import get_settings
    from etikett.store.labels import MAX_DOCUMENT_BYTES, pack

    settings = get_settings()
    if len(data) > settings.import_max_bytes:
        raise PayloadTooLarge(
            f"The file is {len(data)} bytes; at most {settings.import_max_bytes} are imported.",
            ProblemCode.IMPORT_TOO_LARGE,
            size=len(data),
            limit=settings.import_max_bytes,
        )
    conversion = convert(name, data, dpi=dpi, max_expanded=settings.import_max_expanded_bytes)
    ready: list[tuple[str, dict[str, Any]]] = []
    for index, label in enumerate(conversion.labels):
        try:
            document = validate_label(label.document).model_dump(mode="json", exclude_none=True)
        except EtikettError as error:  # a mapping the schema refuses: say where, create nothing
            raise refuse(
                ProblemCode.IMPORT_UNREADABLE,
                f"Label {index + 1} of the file does not convert to a valid document: "
                f"{error.detail}",
                reason="invalid_document",
                errors=error.params.get("errors"),
            ) from None
        if len(pack(document)) > MAX_DOCUMENT_BYTES:
            raise PayloadTooLarge(
                f"Label {index + 1} of the file is larger than a label document may be.",
                ProblemCode.IMPORT_TOO_LARGE,
                limit=MAX_DOCUMENT_BYTES,
            )
        ready.append((label.name, document))
    documents = []
    for label_name, document in ready:
        created = labels.create(
            invocation,
            label_name,
            document,
            comment=f"imported from {name} ({conversion.format})",
        )
        documents.append(ImportedDocument(label_id=created.id, version=1, name=created.name))
    return ImportAnswer(
        source=ImportSource(name=name, format=conversion.format),
        documents=documents,
        report=[ReportEntry(**note.as_dict()) for note in conversion.report],
    )
