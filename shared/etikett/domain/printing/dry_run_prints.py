"""What a print action of a dry run would do, read only: the label version it resolves to, the
variables the label would get, and the counter values it would take. Loaded with the dry runs
(and the flow engine) that use it, not with every request of the flows function."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from etikett import clock
from etikett.domain.counters import counter_values
from etikett.domain.labels import label_records, preflight
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.errors import EtikettError, LabelHasErrors, NotFound
from etikett_engine.flows.effects import EffectFailed, PrintIntent
from etikett_engine.render import VariablesInvalid, resolve_variables


class PrintPlanner:
    """What a print would do, read only: the label version it resolves to, the variables the
    label would get, and the counter values it would take (one after another within the run)."""

    def __init__(self) -> None:
        self._labels: dict[str, tuple[int, LabelDocument] | str] = {}
        self._counters: dict[str, tuple[int, int, str | None]] = {}
        self._taken: dict[str, int] = {}

    def describe(self, intent: PrintIntent) -> dict[str, Any]:
        version, document = self._label(intent.label)
        label_id = intent.label.partition("@")[0]
        self._preflight(intent, label_id, version, document)
        serials = self._serials(document)
        try:
            values = resolve_variables(
                document, intent.variables, use_samples=False, counters=serials
            )
        except VariablesInvalid as error:
            problems = "; ".join(f"{e['variable']} {e['message']}" for e in error.params["errors"])
            raise EffectFailed(f"the label's variables do not fit: {problems}") from None
        for name in serials:
            self._taken[name] = self._taken.get(name, 0) + intent.copies
        return {
            "label": label_id,
            "version": version,
            "resolved_variables": _plain(values),
            "counter_values": serials,
        }

    def _preflight(self, intent: PrintIntent, label_id: str, version: int, document: Any) -> None:
        """The print path refuses a version with error findings (`label.has_errors`): so does
        the dry run, listing the print with the refusal."""
        try:
            preflight.ensure_no_errors(label_id, version, document, doing="printed")
        except LabelHasErrors as refused:
            raise EffectFailed(
                f"the print would be refused ({refused.code}): {refused.detail}",
                detail={
                    "label": label_id,
                    "version": version,
                    "printer": intent.printer,
                    "copies": intent.copies,
                    "refused": {
                        "code": str(refused.code),
                        "message": refused.detail,
                        "findings": refused.params.get("findings", [])[:20],
                    },
                },
            ) from None

    def _label(self, reference: str) -> tuple[int, LabelDocument]:
        if reference not in self._labels:
            self._labels[reference] = self._read_label(reference)
        found = self._labels[reference]
        if isinstance(found, str):
            raise EffectFailed(found)
        return found

    @staticmethod
    def _read_label(reference: str) -> tuple[int, LabelDocument] | str:
        label_id, _, number = reference.partition("@")
        try:
            meta = label_records.load_label(label_id)
            version = int(number) if number else meta.released_version
            if not version:
                return f"{label_id} has no released version"
            record = label_records.load_version(label_id, "label", int(version))
        except NotFound:
            return f"no label {reference}"
        if record.status != "approved":
            return f"version {version} of {label_id} is {record.status}, not approved"
        return int(version), LabelDocument.model_validate(record.document)

    def _serials(self, document: Any) -> dict[str, Any]:

        serials: dict[str, Any] = {}
        for name in counter_values.referenced(document.expressions()):
            if name not in self._counters:
                try:
                    record = counter_values.load(name)
                    self._counters[name] = (
                        counter_values.peek(record),
                        record.step,
                        record.format,
                    )
                except NotFound:
                    self._counters[name] = (1, 1, None)
            first, step, fmt = self._counters[name]
            value = first + step * self._taken.get(name, 0)
            try:
                serials[name] = counter_values.formatted(fmt, value)
            except EtikettError as error:
                raise EffectFailed(f"counter {name!r}: {error.detail}") from None
        return serials


def _plain(values: dict[str, Any]) -> dict[str, Any]:
    return {
        name: clock.rfc3339(value) if isinstance(value, datetime) else value
        for name, value in values.items()
    }
