"""Import: a ZPL or gLabels file becomes new labels, each with version 1 a draft.

The whole file is converted and every label document validated (and sized for storage) before
anything is written, so a refused file creates nothing. The labels are then created together in
one transaction, each with its audit entry: a failure on any of them (a lost race, a store error)
leaves none. That bounds a file to the labels one transaction holds (`MAX_LABELS_PER_IMPORT`, and
`MAX_IMPORT_DOCUMENT_BYTES` of stored documents). What could not be carried over is in `report`.
"""

from typing import Literal

from pydantic import Field

from etikett.domain import activity
from etikett.domain.actors import Invocation
from etikett.domain.labels import labels
from etikett.domain.labels.label_validation import validate_label
from etikett.settings import get_settings
from etikett.store.labels import MAX_DOCUMENT_BYTES, pack
from etikett_engine.errors import EtikettError, PayloadTooLarge, ProblemCode
from etikett_engine.model import Model

DEFAULT_DPI = 203
MAX_LABELS_PER_IMPORT = labels.MAX_CREATED_TOGETHER  # 33: three writes each, 100 per transaction
# DynamoDB takes 4 MB per transaction; the stored (compressed) documents get most of it, the rest
# is left for the labels' other attributes and the audit entries.
MAX_IMPORT_DOCUMENT_BYTES = 3_500_000


class ImportSource(Model):
    name: str = Field(description="The uploaded file's name.")
    format: Literal["zpl", "glabels"]


class ImportedDocument(Model):
    kind: Literal["label"] = "label"
    label_id: str
    version: int = Field(description="Always 1, a draft.")
    name: str
    fidelity: Literal["exact", "with_warnings"] = Field(
        description="`exact`: imported exactly, no warning in `report` concerns this label; "
        "`with_warnings`: something was approximated, dropped or prints wrong (see `report`)."
    )
    warnings: int = Field(description="How many `report` warnings concern this label.")


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
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett.importers.conversion import refuse
    from etikett.importers.formats import convert

    settings = get_settings()
    if len(data) > settings.import_max_bytes:
        raise PayloadTooLarge(
            f"The file is {len(data)} bytes; at most {settings.import_max_bytes} are imported.",
            ProblemCode.IMPORT_TOO_LARGE,
            size=len(data),
            limit=settings.import_max_bytes,
        )
    conversion = convert(
        name,
        data,
        dpi=dpi,
        max_expanded=settings.import_max_expanded_bytes,
        max_labels=MAX_LABELS_PER_IMPORT,
    )
    total = len(conversion.labels)
    activity.progress(f"import {name} ({conversion.format}): converted; checking", 0, total)
    ready: list[labels.NewDocument] = []
    comment = f"imported from {name} ({conversion.format})"
    stored = 0
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
        size = len(pack(document))
        if size > MAX_DOCUMENT_BYTES:
            raise PayloadTooLarge(
                f"Label {index + 1} of the file is larger than a label document may be.",
                ProblemCode.IMPORT_TOO_LARGE,
                limit=MAX_DOCUMENT_BYTES,
            )
        stored += size
        if stored > MAX_IMPORT_DOCUMENT_BYTES:
            raise PayloadTooLarge(
                f"The first {index + 1} labels of the file take {stored} bytes stored; one import "
                f"creates at most {MAX_IMPORT_DOCUMENT_BYTES} bytes of labels at once. Split the "
                "file.",
                ProblemCode.IMPORT_TOO_LARGE,
                size=stored,
                limit=MAX_IMPORT_DOCUMENT_BYTES,
            )
        ready.append(labels.NewDocument(label.name, document, comment=comment))
    created = labels.create_together(invocation, ready)
    activity.progress(f"import {name} ({conversion.format}): labels created", len(created), total)
    documents = []
    for index, made in enumerate(created):
        warnings = sum(
            1
            for note in conversion.report
            if note.severity == "warning" and note.document in (index, None)
        )
        documents.append(
            ImportedDocument(
                label_id=made.id,
                version=1,
                name=made.name,
                fidelity="with_warnings" if warnings else "exact",
                warnings=warnings,
            )
        )
    return ImportAnswer(
        source=ImportSource(name=name, format=conversion.format),
        documents=documents,
        report=[ReportEntry(**note.as_dict()) for note in conversion.report],
    )
