"""What a print request names, resolved: the label version to print (released, or named and
approved) and the printer with its Runner."""

from __future__ import annotations

import re
from typing import NamedTuple

from etikett.domain.labels import label_records
from etikett.domain.printers import printer_records
from etikett.ids import id_pattern
from etikett.store import print_targets
from etikett.store.labels import VersionRecord
from etikett.store.printers import PrinterRecord
from etikett.store.runners import RunnerRecord
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.errors import InvalidRequest, LabelNotReleased

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


# What earlier prints of this warm container found: a label's released version, and a printer
# name's printer and Runner. Only a guess: the next print reads those items again in one round
# trip and takes them only if they still are what was remembered; else it reads as if it had
# never seen them. Bounded: forgotten whole when full.
_released: dict[str, int] = {}
_printers: dict[str, tuple[str, str | None]] = {}
_REMEMBERED = 1000


def read_ahead(reference: str, printer_name: str) -> print_targets.TargetsAhead | None:
    """The items an earlier print found for these names, for the caller's session read to take
    along (`resolve(…, ahead)` then reads nothing); None when there is nothing to guess."""
    try:
        label_id, named_version = parse_reference(reference)
    except InvalidRequest:
        return None  # refused by `resolve`, after the caller was checked
    return _ahead(label_id, named_version, printer_name)


def resolve(
    reference: str, printer_name: str, ahead: print_targets.TargetsAhead | None = None
) -> Target:
    """The label version and the printer: in one round trip when an earlier print found them and
    they are unchanged (none when `ahead` was read with the caller's session), else in two."""
    label_id, named_version = parse_reference(reference)
    target = _as_before(label_id, named_version, printer_name, ahead)
    if target is None:
        target = _read(label_id, named_version, printer_name)
    for remembered in (_released, _printers):
        if len(remembered) >= _REMEMBERED:
            remembered.clear()
    if named_version is None:
        _released[label_id] = target.version
    _printers[printer_name.casefold()] = (target.printer.id, target.printer.runner_id)
    return target


def _ahead(
    label_id: str, named_version: int | None, printer_name: str
) -> print_targets.TargetsAhead | None:
    version = named_version if named_version is not None else _released.get(label_id)
    printer = _printers.get(printer_name.casefold())
    if version is None or printer is None:
        return None
    printer_id, runner_id = printer
    return print_targets.TargetsAhead(
        label_id, named_version is None, version, printer_id, runner_id
    )


def _as_before(
    label_id: str,
    named_version: int | None,
    printer_name: str,
    ahead: print_targets.TargetsAhead | None,
) -> Target | None:
    """The target as an earlier print found it, read again in one round trip (or taken from
    `ahead`, read already); None when there was none or anything changed since (a newer
    release, a renamed or moved printer)."""
    expected = _ahead(label_id, named_version, printer_name)
    if expected is None:
        return None
    _, _, version, _, runner_id = expected.key
    read = ahead.result() if ahead is not None and ahead.key == expected.key else None
    if read is None:
        read = print_targets.at_once(*expected.key)
    if named_version is None and (read.label is None or read.label.released_version != version):
        return None
    if read.version is None or read.printer is None:
        return None
    if read.printer.name.casefold() != printer_name.casefold():
        return None
    if read.printer.runner_id != runner_id or (runner_id and read.runner is None):
        return None
    return Target(
        label_id=label_id,
        version=version,
        document=_approved(label_id, version, read.version),
        printer=read.printer,
        runner=read.runner,
    )


def _read(label_id: str, named_version: int | None, printer_name: str) -> Target:
    """The label version and the printer, in two round trips."""
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
    # Loaded here, not at the mcp and printing functions' cold start.
    from etikett.domain.labels import preflight

    preflight.ensure_no_errors(label_id, version, document, doing="printed")
    return document
