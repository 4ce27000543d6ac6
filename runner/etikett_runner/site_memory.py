"""What a Runner keeps to start without the service: a site PC restarted during an outage (a
power cut takes the line and the internet link alike) goes on printing offline.

`offline-start.json` in the state directory (0600, replaced atomically) holds the last
configuration the service gave (identity, printers, allowed printer ports), the deployed flows'
specs that carry a signed bundle (credentials left out: secrets are held in memory only), and
when the service last answered. What runs from it is checked as at any start: each flow's bundle
against the pinned key, so a file changed on disk runs nothing it did not sign."""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any

from etikett_runner.files import PRIVATE, write_atomic

log = logging.getLogger(__name__)

# What of the configuration is kept: none of it is secret.
CONFIG_FIELDS = (
    "runner_id",
    "name",
    "group_id",
    "printers",
    "printer_ports",
    "data_origin",
    "bundle_public_key",
)
NOT_KEPT = ("credentials",)  # a flow's secrets never reach the disk


class SiteMemory:
    def __init__(self, state_root: Path) -> None:
        self.path = state_root / "offline-start.json"
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        try:
            value = json.loads(self.path.read_bytes())
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as error:
            log.error(
                "%s unreadable (%s): a start without the service runs nothing", self.path, error
            )
            return {}
        return value if isinstance(value, dict) else {}

    def _update(self, **changes: Any) -> None:
        with self._lock:
            kept = {**self._read(), **changes, "last_contact": time.time()}
            write_atomic(self.path, json.dumps(kept, sort_keys=True).encode(), PRIVATE)

    def remember_config(self, config: dict[str, Any]) -> None:
        self._update(config={k: config[k] for k in CONFIG_FIELDS if k in config})

    def remember_flows(self, specs: list[dict[str, Any]]) -> None:
        kept = [
            {k: v for k, v in spec.items() if k not in NOT_KEPT}
            for spec in specs
            if spec.get("bundle") is not None  # only what the service signed runs offline
        ]
        self._update(flows=kept)

    def config(self) -> dict[str, Any] | None:
        found = self._read().get("config")
        return found if isinstance(found, dict) and found.get("runner_id") else None

    def flows(self) -> list[dict[str, Any]]:
        found = self._read().get("flows")
        return [s for s in found if isinstance(s, dict)] if isinstance(found, list) else []

    def away_seconds(self) -> float:
        """Seconds since the service last answered a process of this Runner (as kept; 0 if
        nothing is kept)."""
        last = self._read().get("last_contact")
        return max(0.0, time.time() - float(last)) if isinstance(last, int | float) else 0.0
