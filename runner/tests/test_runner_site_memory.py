"""What a Runner keeps to start during an outage: the configuration's non-secret fields, the
flows the service signed (never their credentials), and when the service last answered."""

from __future__ import annotations

import json
import stat
import time
from pathlib import Path

from etikett_runner.site_memory import SiteMemory


def test_only_signed_flows_are_kept_and_never_their_secrets(tmp_path: Path) -> None:
    memory = SiteMemory(tmp_path)
    assert memory.config() is None and memory.flows() == [] and memory.away_seconds() == 0.0
    memory.remember_config(
        {"runner_id": "run_1", "name": "line", "group_id": "grp_1", "printers": [], "other": 1}
    )
    signed = {"flow_id": "flw_1", "bundle": {"signature": "…"}, "credentials": {"erp": "s3cr3t"}}
    memory.remember_flows([signed, {"flow_id": "flw_2", "document": {}}])  # flw_2: no bundle
    again = SiteMemory(tmp_path)
    assert again.config() == {
        "runner_id": "run_1",
        "name": "line",
        "group_id": "grp_1",
        "printers": [],
    }
    assert again.flows() == [{"flow_id": "flw_1", "bundle": {"signature": "…"}}]
    assert b"s3cr3t" not in memory.path.read_bytes()
    assert stat.S_IMODE(memory.path.stat().st_mode) == 0o600
    assert 0.0 <= again.away_seconds() < 60


def test_the_time_away_counts_from_the_last_contact_kept(tmp_path: Path) -> None:
    memory = SiteMemory(tmp_path)
    memory.remember_config({"runner_id": "run_1"})
    kept = json.loads(memory.path.read_text())
    kept["last_contact"] = time.time() - 7200
    memory.path.write_text(json.dumps(kept))
    assert 7190 < memory.away_seconds() < 7300
    memory.path.write_text("{not json")
    assert memory.config() is None and memory.flows() == []  # unreadable: nothing starts
