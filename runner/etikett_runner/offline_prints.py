"""What a Runner printed while the service was away, journaled for the sync that archives it.

`offline-prints.jsonl` in the state directory (0600, each line fsynced before the call returns):
a `print` line holds everything the archive needs (label version, records with their variables
and counter values, printer, time) and is written *before* the job goes to the printer; an
`outcome` line follows with what the printer said; a `synced` line names prints the service has
accepted. A print with no outcome line is one whose sending a crash interrupted: it may or may
not be on paper, and the sync says so (`outcome: null`) instead of guessing.

Print ids (`opr_` and a ULID) are time-ordered and chosen on the Runner, so the service can take
each exactly once, whatever is sent again after a lost answer."""

from __future__ import annotations

import datetime as dt
import json
import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from etikett_runner.files import PRIVATE, append_json_line, journal_lines, write_atomic
from etikett_runner.ulids import new_id

Outcome = Literal["sent", "failed"]


def new_print_id() -> str:
    return new_id("opr")


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class OfflineRecord:
    """One record of an offline print: its resolved variables, the serials printed (counter
    name → value, as the archive shows them) and the reserved values taken (counter id →
    value, from the Runner's counter blocks)."""

    variables: dict[str, Any]
    serials: dict[str, Any] = field(default_factory=dict)
    counter_values: dict[str, int] = field(default_factory=dict)


@dataclass
class OfflinePrint:
    """One job printed on site without the service: what the sync uploads."""

    id: str
    run_id: str
    deployment_id: str
    flow_id: str
    flow_version: int
    label_id: str
    label_version: int
    printer: str  # the alias the flow printed to
    printer_id: str
    copies: int
    records: list[OfflineRecord]
    printed_at: str  # when the Runner sent it to the printer (journaled just before)
    outcome: Outcome | None = None  # None: a crash came between journaling and the answer
    outcome_reason: str | None = None
    outcome_at: str | None = None

    @property
    def labels(self) -> int:
        return len(self.records) * self.copies

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, value: dict[str, Any]) -> OfflinePrint:
        fields = {k: value[k] for k in cls.__dataclass_fields__ if k in value}
        fields["records"] = [OfflineRecord(**r) for r in value.get("records", [])]
        return cls(**fields)


class OfflinePrints:
    """The journal of offline prints; thread-safe (flow runs print, the sync marks)."""

    def __init__(self, state_root: Path) -> None:
        self.path = state_root / "offline-prints.jsonl"
        self._lock = threading.Lock()
        self._unsynced: dict[str, OfflinePrint] = {}  # insertion order = journal order
        self._replay()

    def _replay(self) -> None:
        for line in journal_lines(self.path):
            try:
                entry = json.loads(line)
                kind = entry.get("kind")
                if kind == "print":
                    taken = OfflinePrint.from_json(entry["print"])
                    self._unsynced[taken.id] = taken
                elif kind == "outcome" and entry["id"] in self._unsynced:
                    self._settle(self._unsynced[entry["id"]], entry)
                elif kind == "synced":
                    for print_id in entry["ids"]:
                        self._unsynced.pop(print_id, None)
            except (ValueError, KeyError, TypeError):
                continue  # a line torn by a crash was never acted on

    @staticmethod
    def _settle(taken: OfflinePrint, entry: dict[str, Any]) -> None:
        taken.outcome = entry["outcome"]
        taken.outcome_reason = entry.get("reason")
        taken.outcome_at = entry.get("at")

    def _append(self, entry: dict[str, Any]) -> None:
        append_json_line(self.path, entry)

    # --- printing ---------------------------------------------------------------------------

    def record(self, taken: OfflinePrint) -> None:
        """Journal a print before its job goes to the printer."""
        with self._lock:
            if taken.id in self._unsynced:
                raise ValueError(f"offline print {taken.id} is journaled already")
            self._append({"kind": "print", "print": taken.to_json()})
            self._unsynced[taken.id] = taken

    def settle(self, print_id: str, outcome: Outcome, reason: str | None = None) -> None:
        """What the printer said about a journaled print."""
        entry = {"kind": "outcome", "id": print_id, "outcome": outcome, "reason": reason}
        entry["at"] = _now()
        with self._lock:
            self._append(entry)
            if print_id in self._unsynced:
                self._settle(self._unsynced[print_id], entry)

    # --- sync ---------------------------------------------------------------------------------

    def unsynced(self, limit: int | None = None) -> list[OfflinePrint]:
        """Prints the service has not accepted yet, oldest first."""
        with self._lock:
            pending = list(self._unsynced.values())
        return pending if limit is None else pending[:limit]

    def mark_synced(self, print_ids: list[str]) -> None:
        """The service accepted these; once nothing is left, the journal starts afresh."""
        with self._lock:
            known = [i for i in print_ids if i in self._unsynced]
            if not known:
                return
            self._append({"kind": "synced", "ids": known})
            for print_id in known:
                del self._unsynced[print_id]
            if not self._unsynced:
                write_atomic(self.path, b"", PRIVATE)

    def status(self) -> dict[str, Any]:
        """What the heartbeat reports (`offline`): labels printed offline and not yet synced,
        and when the oldest of them was printed."""
        with self._lock:
            pending = list(self._unsynced.values())
        return {
            "unsynced_labels": sum(p.labels for p in pending),
            "oldest_unsynced_at": pending[0].printed_at if pending else None,
        }
