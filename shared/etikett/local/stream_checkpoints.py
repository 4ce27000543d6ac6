"""Checkpoints of the local DynamoDB stream pollers: how far each shard was handed over, in a
file beside the local AWS state.

A restart neither loses nor replays records, although moto's state comes back from a snapshot of
local AWS (`local/aws/`). A clean stop stops the pollers before the final snapshot, so that
snapshot holds everything their functions did: the checkpoints are then exact. Otherwise (a crash)
the snapshot is up to a second or so older than the last checkpoints, so each shard keeps a short
journal of when it reached which position, and resumes from the last position reached before the
snapshot was taken (less a margin). Records after it are read again: at least once, never lost;
consumers dedupe by the record's content (for events: the event id).
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from etikett.local.files import write_atomically

logger = logging.getLogger("etikett.streams")


CHECKPOINT_FILE = "dynamodb-streams.json"
_FORMAT = 1
# Journal entries are kept this long (plus the newest older one, the anchor of a rewind).
_JOURNAL_SECONDS = 120.0
_JOURNAL_MAX = 256
# A snapshot is pickled at most this long before its file is in place.
SNAPSHOT_MARGIN_SECONDS = 10.0


def snapshot_time(snapshot: Path) -> float:
    """When the local AWS state file was written (-inf: there is none, a fresh AWS state whose
    streams are new ones anyway)."""
    try:
        return snapshot.stat().st_mtime
    except FileNotFoundError:
        return float("-inf")


@dataclass
class _Shard:
    position: str | None  # the last sequence number handed over; None: none yet
    base: str | None = None  # the position before the journal's first entry
    journal: list[tuple[str, float]] = field(default_factory=list)  # (position, wall time)


class Checkpoints:
    """The checkpoint file: per stream and shard, the last sequence number handed over.

    `snapshot` is the local AWS state file whose age decides how far to trust positions after an
    unclean stop, or `snapshot_taken` that age read earlier (`snapshot_time`: before local AWS
    loaded the state, in another process); neither means the AWS state is durable, so positions
    are always exact."""

    def __init__(
        self,
        path: Path,
        snapshot: Path | None = None,
        margin_seconds: float = SNAPSHOT_MARGIN_SECONDS,
        *,
        snapshot_taken: float | None = None,
    ) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._streams: dict[str, dict[str, _Shard]] = {}
        self._advanced_at = 0.0
        if snapshot_taken is None and snapshot is not None:
            snapshot_taken = snapshot_time(snapshot)
        self._load(snapshot_taken, margin_seconds)

    # --- reading and writing the file ---------------------------------------------------------

    def _load(self, taken: float | None, margin: float) -> None:
        try:
            data = json.loads(self._path.read_text())
            if data.get("format") != _FORMAT:
                raise ValueError(f"unknown format {data.get('format')!r}")
            streams = {
                arn: {
                    shard_id: _Shard(
                        position=entry["position"],
                        base=entry.get("base"),
                        journal=[(str(p), float(t)) for p, t in entry.get("journal", [])],
                    )
                    for shard_id, entry in shards.items()
                }
                for arn, shards in data["streams"].items()
            }
        except FileNotFoundError:
            return
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            aside = self._path.with_name(
                f"{self._path.name}.unreadable-{datetime.now():%Y%m%dT%H%M%S%f}"
            )
            os.replace(self._path, aside)
            logger.warning("stream checkpoints unreadable (%s); moved to %s", error, aside)
            return
        self._streams = streams
        if taken is None:
            return
        # After a clean stop, the final snapshot was written after the checkpoints were closed.
        if data.get("clean") and taken > float(data.get("closed_at", float("inf"))):
            return
        cutoff = taken - margin
        for arn, shards in self._streams.items():
            for shard_id, shard in shards.items():
                kept = [entry for entry in shard.journal if entry[1] <= cutoff]
                resumed = kept[-1][0] if kept else shard.base
                if resumed != shard.position:
                    logger.warning(
                        "unclean stop: %s %s resumes at %s, not %s (records after it are read "
                        "again)",
                        arn,
                        shard_id,
                        resumed,
                        shard.position,
                    )
                shard.position, shard.journal = resumed, kept

    def _save(self, clean: bool) -> None:
        document = {
            "format": _FORMAT,
            "clean": clean,
            "advanced_at": self._advanced_at,
            "closed_at": time.time() if clean else None,
            "streams": {
                arn: {
                    shard_id: {
                        "position": shard.position,
                        "base": shard.base,
                        "journal": shard.journal,
                    }
                    for shard_id, shard in shards.items()
                }
                for arn, shards in self._streams.items()
            },
        }
        write_atomically(self._path, (json.dumps(document, indent=1).encode(),))

    # --- positions ----------------------------------------------------------------------------

    def known(self, arn: str, shard_id: str) -> bool:
        with self._lock:
            return shard_id in self._streams.get(arn, {})

    def position(self, arn: str, shard_id: str) -> str | None:
        with self._lock:
            shard = self._streams.get(arn, {}).get(shard_id)
            return shard.position if shard else None

    def begin(self, arn: str, shard_id: str, position: str | None) -> None:
        """Start reading a shard after `position` (None: from its first record)."""
        with self._lock:
            self._streams.setdefault(arn, {})[shard_id] = _Shard(position=position, base=position)
            self._save(clean=False)

    def advance(self, arn: str, shard_id: str, position: str) -> None:
        """Everything up to `position` was handed over; written to disk before this returns."""
        now = time.time()
        with self._lock:
            shard = self._streams.setdefault(arn, {}).setdefault(shard_id, _Shard(None))
            shard.position = position
            shard.journal.append((position, now))
            while len(shard.journal) > _JOURNAL_MAX or (
                len(shard.journal) > 1 and shard.journal[1][1] < now - _JOURNAL_SECONDS
            ):
                shard.base = shard.journal.pop(0)[0]
            self._advanced_at = now
            self._save(clean=False)

    def retain(self, table_arn: str, stream_arn: str) -> None:
        """Forget the streams of earlier incarnations of a table (deleted and created again)."""
        with self._lock:
            stale = [a for a in self._streams if a.startswith(f"{table_arn}/") and a != stream_arn]
            for arn in stale:
                del self._streams[arn]

    def close(self) -> None:
        """Mark the positions exact: nothing is handed over any more in this process."""
        with self._lock:
            self._save(clean=True)
