"""What a deployed flow's action nodes do on the site, for one trigger event.

Prints are collected, not sent: the event's records for one printer alias (same label and
copies) become one data-stream print request, sent after the event is journaled (see
`flow_runs`). HTTP requests go through the engine's pinned client (`etikett_engine.outgoing`):
HTTPS to public addresses, each address the name resolves to checked and the connection pinned
to it; loopback and private addresses only with `--outgoing-private-networks` (see `reach`); a named
`secret` credential goes as a Bearer token (delivered by the service over the agent channel,
kept in memory only), and only to the origins the secret names, if it names any. Files stay
inside the Runner's data folder; log messages go to the Runner's log and the run's trace."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from etikett_engine import outgoing
from etikett_engine.flows.effects import (
    EffectFailed,
    FileIntent,
    HttpIntent,
    LogIntent,
    Outcome,
    PrintIntent,
)
from etikett_engine.flows.secret_origins import sending_refused
from etikett_runner import reach
from etikett_runner.roots import PathRefused
from etikett_runner.site_folders import write_inside

if TYPE_CHECKING:
    import httpx

log = logging.getLogger(__name__)

MAX_RECORDS_PER_PRINT = 10_000  # the print path's limit per request
MAX_PRINT_BYTES = 4_000_000  # a request body well under the gateway's and Lambda's limits
MAX_MESSAGES = 100
HTTP_TIMEOUT = 10.0
MAX_HTTP_ANSWER = 64_000


def plain(value: Any) -> Any:
    """JSON-safe (CEL gives timestamps and durations)."""
    return json.loads(json.dumps(value, default=str))


@dataclass
class PrintBatch:
    """One print request: records of one event for one printer alias, label and copies."""

    printer: str
    label: str
    copies: int
    records: list[dict[str, Any]] = field(default_factory=list)
    indexes: list[int] = field(default_factory=list)  # each record's index in the event
    size: int = 0  # bytes of the records as JSON


class SiteEffects:
    """The `Effects` of a real run on this Runner. `record_index` names the record the engine
    is running (set by the caller before each record). `credentials` are the secrets the
    service delivered for this flow (ref → value): held in memory, never written or logged."""

    def __init__(
        self,
        data_dir: Path,
        credentials: dict[str, str] | None = None,
        credential_origins: dict[str, list[str]] | None = None,
    ) -> None:
        self.data_dir = data_dir
        self._credentials = dict(credentials or {})
        # ref -> the origins a secret may go to (a ref not here names none)
        self._origins = {ref: tuple(o) for ref, o in (credential_origins or {}).items()}
        self.record_index = 0
        self.batches: list[PrintBatch] = []
        self._open: dict[tuple[str, str, int], PrintBatch] = {}
        self.messages: list[dict[str, Any]] = []

    # --- print: collected per alias, label and copies --------------------------------------

    def print(self, intent: PrintIntent) -> Outcome:
        variables = plain(intent.variables)
        size = len(json.dumps(variables, separators=(",", ":"))) + 1
        key = (intent.printer, intent.label, intent.copies)
        batch = self._open.get(key)
        if (
            batch is None
            or len(batch.records) >= MAX_RECORDS_PER_PRINT
            or batch.size + size > MAX_PRINT_BYTES
        ):
            batch = PrintBatch(intent.printer, intent.label, intent.copies)
            self._open[key] = batch
            self.batches.append(batch)
        batch.records.append(variables)
        batch.indexes.append(self.record_index)
        batch.size += size
        detail = {"label": intent.label, "printer": intent.printer, "copies": intent.copies}
        return Outcome(performed=True, detail=detail, result={**detail, "job_id": None})

    def withdraw(self, record_index: int) -> None:
        """Take back what a record collected for printing: one the engine stopped for running
        away (its loop may have collected hundreds of labels) prints nothing."""
        for batch in self.batches:
            if record_index in batch.indexes:
                kept = [(i, r) for i, r in zip(batch.indexes, batch.records, strict=True)]
                kept = [(i, r) for i, r in kept if i != record_index]
                batch.indexes = [i for i, _ in kept]
                batch.records = [r for _, r in kept]
                batch.size = sum(
                    len(json.dumps(r, separators=(",", ":"))) + 1 for r in batch.records
                )
        self.batches = [b for b in self.batches if b.records]
        self._open = {k: b for k, b in self._open.items() if b.records}

    # --- HTTP: HTTPS to public addresses (private ones only where allowed) ---------------

    def http(self, intent: HttpIntent) -> Outcome:
        import httpx

        private_allowed = reach.policy().outgoing_private_networks
        try:
            outgoing.check_url(intent.url, private_allowed=private_allowed)
        except outgoing.UrlRefused as refused:
            raise EffectFailed(f"{intent.url}: refused, it {refused}") from None
        headers: dict[str, str] = {}
        if intent.credential:
            secret = self._credentials.get(intent.credential)
            if secret is None:
                raise EffectFailed(
                    f"the credential {intent.credential!r} was not delivered to this Runner "
                    "(it must be a `secret` credential that exists)"
                )
            elsewhere = sending_refused(intent.url, self._origins.get(intent.credential))
            if elsewhere is not None:
                raise EffectFailed(
                    f"credential.origin_refused: the secret {intent.credential!r} is not sent "
                    f"to {intent.url}: {elsewhere}"
                )
            headers["authorization"] = f"Bearer {secret}"
        body = plain(intent.body) if intent.body is not None else None
        try:
            response = _client(private_allowed).request(
                intent.method, intent.url, json=body, headers=headers
            )
        except outgoing.AddressRefused as refused:
            raise EffectFailed(f"{intent.method} {intent.url}: refused, {refused}") from None
        except httpx.HTTPError as error:
            raise EffectFailed(f"{intent.method} {intent.url}: {error}") from None
        try:
            answer: Any = response.json() if len(response.content) <= MAX_HTTP_ANSWER else None
        except ValueError:
            answer = None
        if answer is None:
            answer = response.text[:2000]
        return Outcome(
            performed=True,
            detail={"method": intent.method, "url": intent.url, "status": response.status_code},
            result={"status": response.status_code, "body": answer},
        )

    # --- files: inside the data folder only --------------------------------------------------

    def file(self, intent: FileIntent) -> Outcome:
        try:
            relative = write_inside(self.data_dir, intent.path, intent.content.encode())
        except PathRefused as refused:
            raise EffectFailed(str(refused)) from None
        except OSError as error:
            raise EffectFailed(f"{intent.path!r}: {error.strerror or error}") from None
        return Outcome(
            performed=True, detail={"path": relative, "bytes": len(intent.content.encode())}
        )

    # --- log ------------------------------------------------------------------------------------

    def log(self, intent: LogIntent) -> Outcome:
        level = getattr(logging, intent.level.upper(), logging.INFO)
        log.log(level, "flow node %s: %s", intent.node_id, intent.message)
        if len(self.messages) < MAX_MESSAGES:
            self.messages.append(
                {
                    "record": self.record_index,
                    "node_id": intent.node_id,
                    "level": intent.level,
                    "message": intent.message[:2000],
                }
            )
        return Outcome(performed=True, detail={"level": intent.level, "message": intent.message})


def _client(private_allowed: bool) -> httpx.Client:
    return outgoing.kept_client(
        timeout=HTTP_TIMEOUT,
        private_allowed=private_allowed,
        headers={"user-agent": "etikett-runner"},
    )
