"""Printing a flow run's batch on site while the service is away: rendered from the deployment's
signed bundle, with counter values from the Runner's reserved blocks, journaled as an offline
print before the job goes to the printer (docs/concepts/offline-sites.md).

A batch prints offline only if its deployment's bundle allows it, within the signed bounds (hours
since the service was last reached, labels not yet synced), for a label the bundle can print
offline, on a printer this Runner knows, with values left in its blocks; otherwise it waits for
the service, as before. The batch keeps its print id and values (in the run's journal) before
the print is journaled, and the offline-print journal decides after a restart: a print journaled
is never sent again, a value taken is never taken again."""

from __future__ import annotations

import datetime as dt
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from etikett_runner.bundles import SiteBundles
from etikett_runner.connectivity import Connectivity
from etikett_runner.counter_blocks import CounterBlocks, NoValueLeft
from etikett_runner.counter_reserve import label_counters, offline_policy, period_of
from etikett_runner.offline_prints import OfflinePrint, OfflinePrints, OfflineRecord, new_print_id
from etikett_runner.printers import Printers, PrinterTarget
from etikett_runner.tuning import Tuning
from etikett_runner.zebra import NoAnswer, PrinterConnection, PrinterUnreachable

log = logging.getLogger(__name__)


class OfflineBatch(Protocol):
    """What a flow run's batch (`flow_runs.Batch`) holds for printing offline."""

    printer: str
    label: str
    copies: int
    records: list[dict[str, Any]]
    indexes: list[int]
    error: str | None
    offline_print: str | None
    offline_values: list[dict[str, Any]] | None
    offline_outcome: str | None


class OfflineRun(Protocol):
    id: str
    deployment_id: str
    flow_id: str
    version: int

    def fail(self, index: int, node_id: str | None, message: str) -> None: ...


def refusal(
    payload: dict[str, Any] | None,
    label: str,
    labels: int,
    *,
    away_seconds: float,
    unsynced_labels: int,
) -> str | None:
    """Why a batch of `labels` labels of `label` may not print offline under the deployment's
    signed bundle; None if it may."""
    if payload is None:
        return "its deployment has no signed bundle on this Runner"
    policy = offline_policy(payload)
    if policy.get("allowed") is not True:
        return "its deployment does not allow offline printing"
    hours = float(policy.get("max_hours") or 0)
    if away_seconds > hours * 3600:
        return f"the service has been away longer than {hours:g} h (the deployment's bound)"
    limit = int(policy.get("max_labels") or 0)
    if unsynced_labels + labels > limit:
        return f"{unsynced_labels} labels printed offline are not synced yet (bound {limit})"
    if any(entry.get("reference") == label for entry in payload.get("labels") or []):
        return None
    label_id = label.split("@", 1)[0]
    named = [str(r) for r in payload.get("not_offline") or [] if label_id in str(r)]
    why = named[0] if named else f"{label} is not in its bundle"
    return f"the label cannot print offline: {why}"


def formatted(value_format: str | None, value: int) -> Any:
    """A counter value as labels print it (the service's `counter_values.formatted`)."""
    if value_format is None:
        return value
    if value_format and set(value_format) == {"0"}:
        return str(value).zfill(len(value_format))
    from etikett_engine.cel import evaluate

    return evaluate(value_format, {"value": value}, {"value": "integer"})


def _stamp(now: dt.datetime) -> str:
    return now.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class _Printable:
    document: dict[str, Any]
    label_id: str
    version: int
    counters: list[str]


class OfflinePrinter:
    """Prints batches offline; the flow host tells it the bundles it runs (`use`)."""

    def __init__(
        self,
        bundles: SiteBundles,
        blocks: CounterBlocks,
        journal: OfflinePrints,
        printers: Printers,
        connectivity: Connectivity,
        tuning: Tuning,
    ) -> None:
        self.bundles = bundles
        self.blocks = blocks
        self.journal = journal
        self.printers = printers
        self.connectivity = connectivity
        self.tuning = tuning
        self._lock = threading.Lock()
        self._payloads: dict[str, dict[str, Any]] | None = None  # None: read the kept ones
        self._labels: dict[tuple[str, str], _Printable] = {}  # (deployment, reference)
        self._said: dict[str, str] = {}  # run id → why it waits, logged once

    def use(self, payloads: dict[str, dict[str, Any]]) -> None:
        """The verified bundles of the deployments running now (deployment id → payload)."""
        with self._lock:
            if payloads != self._payloads:
                self._payloads = dict(payloads)
                self._labels.clear()

    def payloads(self) -> list[dict[str, Any]]:
        with self._lock:
            if self._payloads is None:
                self._payloads = self.bundles.kept()
            return list(self._payloads.values())

    def payload(self, deployment_id: str) -> dict[str, Any] | None:
        with self._lock:
            if self._payloads is None:
                self._payloads = self.bundles.kept()
            return self._payloads.get(deployment_id)

    def why_not(self, run: OfflineRun, batch: OfflineBatch) -> str | None:
        """Why the batch waits for the service instead of printing offline; None if it may
        print offline now."""
        payload = self.payload(run.deployment_id)
        why = refusal(
            payload,
            batch.label,
            len(batch.records) * batch.copies,
            away_seconds=self.connectivity.away_seconds,
            unsynced_labels=int(self.journal.status()["unsynced_labels"]),
        )
        if why is None and self.target(payload, batch.printer) is None:
            why = f"no printer named for the alias {batch.printer!r} is configured here"
        return why

    def target(self, payload: dict[str, Any] | None, alias: str) -> PrinterTarget | None:
        name = (payload or {}).get("printers", {}).get(alias)
        return next((t for t in self.printers.configured() if t.name == name), None)

    def _printable(self, deployment_id: str, reference: str) -> _Printable:
        key = (deployment_id, reference)
        with self._lock:
            found = self._labels.get(key)
        if found is None:
            payload = self.payload(deployment_id) or {}
            entry = next(e for e in payload.get("labels") or [] if e["reference"] == reference)
            found = _Printable(
                entry["document"],
                str(entry["label_id"]),
                int(entry["version"]),
                label_counters(entry["document"]),
            )
            with self._lock:
                self._labels[key] = found
        return found

    # --- printing ------------------------------------------------------------------------------

    def print_batch(self, run: OfflineRun, batch: OfflineBatch, save: Callable[[], None]) -> bool:
        """Print the batch offline if it may; True once it is settled (printed, failed, or
        found journaled after a restart), False if it waits. `save` journals the run."""
        if self.settled_before(run, batch):
            return True
        why = self.why_not(run, batch)
        if why is not None:
            if self._said.get(run.id) != why:
                self._said[run.id] = why
                log.info("flow run %s: waits for the service: %s", run.id, why)
            return False
        payload = self.payload(run.deployment_id)
        target = self.target(payload, batch.printer)
        assert payload is not None and target is not None  # why_not said so
        label = self._printable(run.deployment_id, batch.label)
        with self.printers.exclusive(target.address):
            connection = self._ready(target)
            if connection is None:
                return False
            with connection:
                if batch.offline_values is None and not self._take_values(run, batch, label):
                    return False
                save()  # the print's id and values, before the print is journaled
                return self._print(run, batch, label, target, connection)

    def settled_before(self, run: OfflineRun, batch: OfflineBatch) -> bool:
        """A print of this batch journaled before a restart: settled by the journal, never
        sent again. False if none was journaled (the values it kept print it offline, or are
        a gap if the service prints it)."""
        if batch.offline_print is None:
            return False
        journaled = next((p for p in self.journal.unsynced() if p.id == batch.offline_print), None)
        if journaled is None:
            return False
        if journaled.outcome == "sent":
            batch.offline_outcome = "sent"
            return True
        batch.offline_outcome = journaled.outcome or "unknown"
        why = (
            f"the printer refused it: {journaled.outcome_reason}"
            if journaled.outcome == "failed"
            else "the Runner stopped while sending it; not sent again, whether it printed is "
            "unknown (check the printer)"
        )
        self._fail(run, batch, f"offline print {journaled.id}: {why}")
        return True

    def _ready(self, target: PrinterTarget) -> PrinterConnection | None:
        """An open connection to a printer that can print now; None (it waits) otherwise."""
        connection = PrinterConnection(
            target.address, self.tuning.connect_timeout, self.tuning.answer_timeout
        )
        try:
            connection.open()
            state = connection.state() if target.language == "zpl" else None
        except (PrinterUnreachable, NoAnswer) as error:
            connection.close()
            self.printers.note(target, "unreachable")
            log.warning("offline print to %s waits: %s", target.label, error)
            return None
        if state is not None and not state.ready:
            connection.close()
            self.printers.note(target, state.status)
            log.warning("offline print to %s waits: %s", target.label, state.description)
            return None
        self.printers.note(target, "ready")
        return connection

    def _take_values(self, run: OfflineRun, batch: OfflineBatch, label: _Printable) -> bool:
        """Each record's counter values from the blocks (journaled there as used); False if a
        counter has too few left (the batch waits; a value taken meanwhile is a gap)."""
        now = dt.datetime.now(dt.UTC)
        shapes = {}
        for counter in label.counters:
            shape = self.blocks.shape(counter)
            if shape is None or self.blocks.left(counter, period_of(shape[0], now)) < len(
                batch.records
            ):
                log.info("flow run %s: too few reserved values of %s left", run.id, counter)
                return False
            shapes[counter] = shape
        values: list[dict[str, Any]] = []
        try:
            for _ in batch.records:
                taken: dict[str, int] = {}
                serials: dict[str, Any] = {}
                for counter, (reset, value_format) in shapes.items():
                    taken[counter] = self.blocks.take(counter, period_of(reset, now))
                    serials[counter] = formatted(value_format, taken[counter])
                values.append({"counter_values": taken, "serials": serials})
        except NoValueLeft as none_left:
            log.info("flow run %s: waits for the service: %s", run.id, none_left)
            return False
        batch.offline_print = new_print_id()
        batch.offline_values = values
        return True

    def _print(
        self,
        run: OfflineRun,
        batch: OfflineBatch,
        label: _Printable,
        target: PrinterTarget,
        connection: PrinterConnection,
    ) -> bool:
        from etikett_engine.errors import EtikettError
        from etikett_runner.rendering import render_label

        assert batch.offline_print is not None and batch.offline_values is not None
        now = dt.datetime.now(dt.UTC)
        now = now.replace(microsecond=now.microsecond // 1000 * 1000)  # as the service's jobs
        try:
            data = b"".join(
                render_label(
                    label.document,
                    record,
                    values["serials"],
                    language=target.language,
                    copies=batch.copies,
                    now=now,
                    preview=False,
                ).job
                for record, values in zip(batch.records, batch.offline_values, strict=True)
            )
        except (EtikettError, ValueError) as error:  # never journaled: its values are a gap
            log.warning("flow run %s: the label cannot print: %s", run.id, error)
            batch.offline_outcome = "failed"
            self._fail(run, batch, f"the label cannot print: {error}")
            return True
        self.journal.record(
            OfflinePrint(
                id=batch.offline_print,
                run_id=run.id,
                deployment_id=run.deployment_id,
                flow_id=run.flow_id,
                flow_version=run.version,
                label_id=label.label_id,
                label_version=label.version,
                printer=batch.printer,
                printer_id=target.printer_id or "",
                copies=batch.copies,
                records=[
                    OfflineRecord(dict(record), dict(v["serials"]), dict(v["counter_values"]))
                    for record, v in zip(batch.records, batch.offline_values, strict=True)
                ],
                printed_at=_stamp(dt.datetime.now(dt.UTC)),
            )
        )
        try:
            connection.send(data)
        except PrinterUnreachable as error:  # part of it may have arrived: never sent again
            self.journal.settle(batch.offline_print, "failed", str(error))
            batch.offline_outcome = "failed"
            self._fail(run, batch, f"offline print {batch.offline_print}: {error}")
            return True
        self.journal.settle(batch.offline_print, "sent")
        batch.offline_outcome = "sent"
        self._said.pop(run.id, None)
        log.info(
            "flow run %s: %d label(s) printed offline to %s (%s)",
            run.id,
            len(batch.records) * batch.copies,
            target.label,
            batch.offline_print,
        )
        return True

    @staticmethod
    def _fail(run: OfflineRun, batch: OfflineBatch, why: str) -> None:
        batch.error = why
        for index in batch.indexes:
            run.fail(index, None, f"print to {batch.printer!r}: {why}")
