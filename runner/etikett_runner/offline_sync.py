"""Uploading what the Runner printed while the service was away (`offline_prints`), once the
service answers again: oldest first, in chunks, each print marked synced when the service has
archived it (`accepted`, or `already` after an answer lost on the way back). The journal is the
state: a sync cut off anywhere is resumed by the next one, which sends again what was not yet
marked, and the service takes each print once.

A print the service refuses (a counter value outside this Runner's blocks, a deployment not of
its group, …) will be refused again: it is kept aside in `offline-refused.jsonl` (0600) with the
reason, logged, and leaves the journal, so the sync never retries it forever. A print journaled
by this process that has no outcome yet is still being sent: it waits for its outcome. One left
without an outcome by an earlier process (a crash between journaling and the printer's answer),
and not settled by the flow host within a minute of the start, is uploaded as it is
(`outcome: null`): the service records that nobody knows."""

from __future__ import annotations

import datetime as dt
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from etikett_runner.backoff import Backoff
from etikett_runner.channel import AgentChannel, RunnerRemoved
from etikett_runner.connectivity import Connectivity
from etikett_runner.files import append_json_line
from etikett_runner.offline_prints import OfflinePrint, OfflinePrints
from etikett_runner.transport import Refused, ServerAway

log = logging.getLogger(__name__)

MAX_PRINTS = 100  # per upload, as the service takes them
MAX_RECORDS = 10_000
# A print with no outcome journaled this long ago is not in flight any more (a send gives up
# long before): upload it as one whose outcome nobody knows.
SETTLE_SECONDS = 600.0
# One left without an outcome by an earlier process waits this long after the start: the flow
# host may settle it from what its own journals know when its runs load.
ORPHAN_GRACE_SECONDS = 60.0


class OfflineSync:
    def __init__(
        self,
        channel: AgentChannel,
        prints: OfflinePrints,
        state_root: Path,
        connectivity: Connectivity,
        on_removed: Callable[[RunnerRemoved], None],
        *,
        interval: float = 5.0,
        orphan_grace: float = ORPHAN_GRACE_SECONDS,
    ) -> None:
        self.channel = channel
        self.prints = prints
        self.refused_path = state_root / "offline-refused.jsonl"
        self.connectivity = connectivity
        self._on_removed = on_removed
        self._interval = interval
        self._wake = threading.Event()
        self._lock = threading.Lock()
        # Left without an outcome by an earlier process: nobody will settle them any more.
        self._orphans = {p.id for p in prints.unsynced() if p.outcome is None}
        self._orphans_from = time.monotonic() + orphan_grace

    def wake(self) -> None:
        """Something was printed offline, or the service is back: look now."""
        self._wake.set()

    def run(self, stop: threading.Event) -> None:
        """Sync whenever the journal holds prints, backing off while the service is away."""
        backoff = Backoff(base=1.0, cap=60.0)
        while not stop.is_set():
            if not self._ready():
                self._wake.wait(timeout=self._interval)
                self._wake.clear()
                continue
            if self.sync():
                backoff.reset()
                self._wake.wait(timeout=self._interval)  # what is left waits for its outcome
                self._wake.clear()
            else:
                self.connectivity.pause(backoff.next())

    def _ready(self) -> list[OfflinePrint]:
        """Unsynced prints that may go now, oldest first: each settled, or whose sending was
        cut off (by a crash, or long ago). The first still in flight stops the list: what
        comes after it waits, so prints reach the service in the order they were made."""
        cutoff = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=SETTLE_SECONDS)
        orphans_go = time.monotonic() >= self._orphans_from
        ready = []
        for taken in self.prints.unsynced():
            if taken.outcome is None:
                orphan = taken.id in self._orphans
                if (orphan and not orphans_go) or (not orphan and _time(taken.printed_at) > cutoff):
                    break
            ready.append(taken)
        return ready

    def sync(self) -> bool:
        """Upload what is ready; False if the service is away (or refused this Runner)."""
        with self._lock:
            ready = self._ready()
            while ready:
                chunk = _chunk(ready)
                if not self._upload(chunk):
                    return False
                ready = ready[len(chunk) :]
            return True

    def _upload(self, chunk: list[OfflinePrint]) -> bool:
        try:
            answer = self.channel.offline_prints({"prints": [p.to_json() for p in chunk]})
        except ServerAway as exc:
            if self.connectivity.failed():
                log.warning("offline prints: service unavailable (%s); kept for later", exc)
            return False
        except RunnerRemoved as exc:
            self._on_removed(exc)
            return False
        except Refused as exc:
            if exc.status != 422:  # not about the prints (a service without the route, …)
                log.error("offline prints: the service refused the upload: %s", exc)
                return False
            # A print the service cannot read: find which, sending them one at a time, and
            # keep that one aside.
            if len(chunk) > 1:
                return all(self._upload([taken]) for taken in chunk)
            self._keep_aside(chunk[0], exc.code, exc.detail)
            self.prints.mark_synced([chunk[0].id])
            return True
        self.connectivity.succeeded()
        by_id = {p.id: p for p in chunk}
        synced = []
        for item in answer.get("prints", []):
            taken = by_id.get(str(item.get("id")))
            if taken is None:
                continue
            if item.get("result") in ("accepted", "already"):
                synced.append(taken.id)
                if item.get("flag"):
                    log.warning("offline print %s archived, flagged %s", taken.id, item["flag"])
            elif item.get("result") == "refused":
                self._keep_aside(taken, str(item.get("reason")), str(item.get("detail")))
                synced.append(taken.id)
        self.prints.mark_synced(synced)
        return True

    def _keep_aside(self, taken: OfflinePrint, reason: str, detail: str) -> None:
        """Written (and fsynced) before the print leaves the journal: never lost, never sent
        again."""
        log.error(
            "offline print %s (%d labels, printed %s) refused by the service: %s (%s); kept in %s",
            taken.id,
            taken.labels,
            taken.printed_at,
            reason,
            detail,
            self.refused_path,
        )
        entry = {"print": taken.to_json(), "reason": reason, "detail": detail}
        append_json_line(self.refused_path, entry)

    def refused(self) -> list[dict[str, Any]]:
        """The prints kept aside, with their reasons."""
        if not self.refused_path.exists():
            return []
        kept = []
        for line in self.refused_path.read_bytes().splitlines():
            try:
                kept.append(json.loads(line))
            except ValueError:
                continue  # a line torn by a crash
        return kept


def _chunk(ready: list[OfflinePrint]) -> list[OfflinePrint]:
    """The oldest prints that fit one upload (a single print always fits: the service takes
    as many records in one print as in one upload)."""
    chunk: list[OfflinePrint] = []
    records = 0
    for taken in ready[:MAX_PRINTS]:
        if chunk and records + len(taken.records) > MAX_RECORDS:
            break
        chunk.append(taken)
        records += len(taken.records)
    return chunk


def _time(value: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return dt.datetime.min.replace(tzinfo=dt.UTC)  # unreadable: not in flight
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)
