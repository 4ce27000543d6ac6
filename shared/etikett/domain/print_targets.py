"""What a print request names, resolved: the label version to print (released, or named and
approved) and the printer with its Runner."""

from __future__ import annotations

import re
from typing import NamedTuple

from etikett.domain import label_records, printer_records
from etikett.dsl.label import LabelDocument
from etikett.errors import InvalidRequest, LabelNotReleased
from etikett.ids import id_pattern
from etikett.store import print_targets
from etikett.store.labels import VersionRecord
from etikett.store.printers import PrinterRecord
from etikett.store.runners import RunnerRecord

REFERENCE = re.compile(rf"^(?P<label>{id_pattern('lbl')})(?:@(?P<version>[1-9][0-9]{{0,8}}))?$")


class Target(NamedTuple):
    label_id: str
    version: int
    document: LabelDocument
    printer: PrinterRecord
    runner: RunnerRecord | None  # None if it could not be read with the printer


def parse_reference(reference: str) -> tuple[str, int | None]:
    """`lbl_…` (the released version) or `lbl_…@N`."""
    match = REFERENCE.match(reference)
    if match is None:
        raise InvalidRequest.field("body.label_id", "must be lbl_… or lbl_…@N")
    version = match.group("version")
    return match.group("label"), int(version) if version else None


def resolve(reference: str, printer_name: str) -> Target:
    """The label version and the printer, in two round trips."""
    label_id, named_version = parse_reference(reference)
    first = print_targets.first(label_id, named_version, printer_name)
    if named_version is None:
        released = label_records.existing_label(label_id, first.label).released_version
        if not released:
            raise LabelNotReleased(
                f"{label_id} has no released version; approve one first or "
                "name an approved version.",
                label_id=label_id,
            )
        version = released
    else:
        version = named_version
        label_records.existing_version(label_id, "label", version, first.version)
    name = printer_records.named(printer_name, first.printer_name)
    second = print_targets.second(
        label_id, version if first.version is None else None, name.printer_id, name.runner_id
    )
    record = label_records.existing_version(
        label_id, "label", version, first.version or second.version
    )
    return Target(
        label_id=label_id,
        version=version,
        document=_approved(label_id, version, record),
        printer=printer_records.existing(name.printer_id, second.printer),
        runner=second.runner,
    )


def _approved(label_id: str, version: int, record: VersionRecord) -> LabelDocument:
    if record.status != "approved":
        raise LabelNotReleased(
            f"Version {version} of {label_id} is {record.status}; only approved versions print.",
            label_id=label_id,
            version=version,
            status=record.status,
        )
    document = LabelDocument.model_validate(record.document)
    from etikett.domain import preflight

    preflight.ensure_no_errors(label_id, version, document, doing="printed")
    return document
