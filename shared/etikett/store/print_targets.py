"""What a print request names, read in two round trips (each one consistent read of several
items): the label (or the named version) with the printer's name, then the version to print with
the printer and its Runner; or in one, when the caller knows (from an earlier print) which
version and printer they were (`at_once`), a read that can also ride on the caller's session
read (`TargetsAhead`)."""

from __future__ import annotations

from typing import Any, NamedTuple

from pynamodb.transactions import TransactGet

from etikett.store.base import found, reads
from etikett.store.labels import (
    META_SK,
    LabelRecord,
    VersionRecord,
    _LabelItem,
    _version,
    _VersionItem,
    version_sk,
)
from etikett.store.labels import _label as label_of
from etikett.store.printers import (
    PrinterName,
    PrinterRecord,
    _NameClaim,
    _PrinterItem,
    name_key,
    name_of,
    printer_of,
)
from etikett.store.runners import RUNNER_SK, RunnerRecord, _RunnerItem
from etikett.store.runners import _runner as runner_of


class FirstRead(NamedTuple):
    label: LabelRecord | None  # read when no version was named
    version: VersionRecord | None  # the named version
    printer_name: PrinterName | None


class SecondRead(NamedTuple):
    version: VersionRecord | None
    printer: PrinterRecord | None
    runner: RunnerRecord | None


def first(label_id: str, named_version: int | None, printer_name: str) -> FirstRead:
    with reads() as batch:
        label = batch.get(_LabelItem, label_id, META_SK) if named_version is None else None
        named = (
            batch.get(_VersionItem, label_id, version_sk("label", named_version))
            if named_version is not None
            else None
        )
        claim = batch.get(_NameClaim, name_key(printer_name))
    label_item = found(label) if label is not None else None
    version_item = found(named) if named is not None else None
    claim_item = found(claim)
    return FirstRead(
        label=label_of(label_item) if label_item is not None else None,
        version=_version(version_item) if version_item is not None else None,
        printer_name=name_of(claim_item) if claim_item is not None else None,
    )


def second(
    label_id: str, version: int | None, printer_id: str, runner_id: str | None
) -> SecondRead:
    """`version` None: it was read already."""
    with reads() as batch:
        named = (
            batch.get(_VersionItem, label_id, version_sk("label", version))
            if version is not None
            else None
        )
        printer = batch.get(_PrinterItem, printer_id)
        runner = batch.get(_RunnerItem, runner_id, RUNNER_SK) if runner_id else None
    version_item = found(named) if named is not None else None
    printer_item = found(printer)
    runner_item = found(runner) if runner is not None else None
    return SecondRead(
        version=_version(version_item) if version_item is not None else None,
        printer=printer_of(printer_item) if printer_item is not None else None,
        runner=runner_of(runner_item) if runner_item is not None else None,
    )


class OneRead(NamedTuple):
    label: LabelRecord | None  # read when no version was named
    version: VersionRecord | None
    printer: PrinterRecord | None
    runner: RunnerRecord | None


class TargetsAhead:
    """The items of `at_once`, asked for in another read's round trip (`ReadAlong`); `result`
    is None until that read ran."""

    def __init__(
        self, label_id: str, with_label: bool, version: int, printer_id: str, runner_id: str | None
    ) -> None:
        self.key = (label_id, with_label, version, printer_id, runner_id)
        self._futures: tuple[Any, Any, Any, Any] | None = None

    def ask(self, batch: TransactGet) -> None:
        label_id, with_label, version, printer_id, runner_id = self.key
        self._futures = (
            batch.get(_LabelItem, label_id, META_SK) if with_label else None,
            batch.get(_VersionItem, label_id, version_sk("label", version)),
            batch.get(_PrinterItem, printer_id),
            batch.get(_RunnerItem, runner_id, RUNNER_SK) if runner_id else None,
        )

    def result(self) -> OneRead | None:
        if self._futures is None:
            return None
        label, named, printer, runner = (
            found(future) if future is not None else None for future in self._futures
        )
        return OneRead(
            label=label_of(label) if label is not None else None,
            version=_version(named) if named is not None else None,
            printer=printer_of(printer) if printer is not None else None,
            runner=runner_of(runner) if runner is not None else None,
        )


def at_once(
    label_id: str, with_label: bool, version: int, printer_id: str, runner_id: str | None
) -> OneRead:
    """Label (`with_label`), version, printer and Runner in one consistent read, each None when
    it is not there; the caller checks that they are still what it expected."""
    ahead = TargetsAhead(label_id, with_label, version, printer_id, runner_id)
    with reads() as batch:
        ahead.ask(batch)
    read = ahead.result()
    assert read is not None
    return read
