"""Deployment bundles on the Runner, against a fake agent channel: the key pinned from the
configuration, a signed bundle verified, kept (0600) and run from (its signed context, not the
unsigned answer's), a tampered or foreign bundle refused with a `failed` status and nothing of
it run, a kept bundle changed on disk refused, and bundles of deployments gone forgotten."""

from __future__ import annotations

import base64
import json
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from etikett_runner.bundles import BundleRefused, SiteBundles, verify
from etikett_runner.connectivity import Connectivity
from etikett_runner.flow_host import FlowHost
from etikett_runner.tuning import Tuning
from runner_fakes import FakeChannel, eventually, spec, statuses

# Every second: a file with the context's site, so what runs shows which context it got.
HELLO = {
    "nodes": [
        {"id": "t", "type": "trigger.schedule", "every_s": 1, "wires": ["w"]},
        {"id": "w", "type": "action.file", "path": "'hello.txt'", "content": "context.site"},
    ]
}


def _pem(key: Ed25519PrivateKey) -> str:
    return (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )


def _signed(key: Ed25519PrivateKey, payload: dict[str, Any]) -> dict[str, str]:
    # As the service signs (shared/etikett/domain/deployments/bundles.py): canonical JSON.
    data = json.dumps({**payload, "format": 1}, sort_keys=True, separators=(",", ":")).encode()
    return {
        "key_id": "test",
        "payload": base64.b64encode(data).decode(),
        "signature": base64.b64encode(key.sign(data)).decode(),
    }


def _bundled(key: Ed25519PrivateKey, context_site: str = "A") -> dict[str, Any]:
    signed = spec(HELLO, context={"site": context_site}, printers={})
    payload = {**signed, "runner_id": "run_1", "labels": [], "not_offline": []}
    # The answer around the bundle says otherwise: the Runner must run what was signed.
    return {**signed, "context": {"site": "unsigned"}, "bundle": _signed(key, payload)}


Host = tuple[FakeChannel, FlowHost, threading.Thread, Path]


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    channel = FakeChannel()
    stop = threading.Event()
    flows = FlowHost(
        channel,  # type: ignore[arg-type]
        tmp_path / "state",
        tmp_path / "data",
        Connectivity(stop),
        lambda removed: None,
        tuning=Tuning(flows_seconds=0.05, flow_retry_seconds=0.1),
    )
    thread = threading.Thread(target=flows.run, args=(stop,), daemon=True)
    yield channel, flows, thread, tmp_path
    stop.set()
    if thread.is_alive():
        thread.join(10)


def test_a_signed_bundle_is_kept_private_and_what_runs_is_what_was_signed(host: Host) -> None:
    channel, _, thread, tmp = host
    key = Ed25519PrivateKey.generate()
    channel.bundle_key = _pem(key)
    channel.wanted = [_bundled(key)]
    thread.start()
    hello = tmp / "data" / "hello.txt"
    assert eventually(lambda: hello.exists() and hello.read_text()) == "A"
    assert statuses(channel)[-1] == ("active", None)
    kept, pinned = tmp / "state" / "bundles" / "dep_1.json", tmp / "state" / "bundle-key.pem"
    assert pinned.read_text() == _pem(key)
    for private in (kept, pinned):
        assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert verify(json.loads(kept.read_text()), _pem(key))["context"] == {"site": "A"}

    # Another key offered later is not taken: bundles stay checked by the pinned one.
    SiteBundles(tmp / "state").pin(_pem(Ed25519PrivateKey.generate()))
    assert pinned.read_text() == _pem(key)

    # A deployment no longer wanted: its flow stops and its bundle goes.
    channel.wanted = []
    eventually(lambda: not kept.exists())


@pytest.mark.parametrize("tampering", ["payload", "foreign key"])
def test_a_tampered_bundle_is_refused_and_nothing_of_it_runs(host: Host, tampering: str) -> None:
    channel, _, thread, tmp = host
    key = Ed25519PrivateKey.generate()
    channel.bundle_key = _pem(key)
    wanted = _bundled(Ed25519PrivateKey.generate() if tampering == "foreign key" else key)
    if tampering == "payload":  # one byte of the signed context changed on the way
        data = base64.b64decode(wanted["bundle"]["payload"]).replace(b'"A"', b'"B"')
        wanted["bundle"] = {**wanted["bundle"], "payload": base64.b64encode(data).decode()}
    channel.wanted = [wanted]
    thread.start()
    eventually(lambda: statuses(channel) and statuses(channel)[-1][0] == "failed")
    _, detail = statuses(channel)[-1]
    assert "bundle is refused" in str(detail) and "signature" in str(detail)
    time.sleep(1.3)  # a schedule of every second would have run by now
    assert not (tmp / "data" / "hello.txt").exists()
    assert not (tmp / "state" / "bundles").exists()


def test_a_kept_bundle_changed_on_disk_is_refused(tmp_path: Path) -> None:
    key = Ed25519PrivateKey.generate()
    bundles = SiteBundles(tmp_path)
    bundles.pin(_pem(key))
    wanted = _bundled(key)
    accepted = bundles.accept(wanted, "run_1")
    assert accepted["context"] == {"site": "A"} and "problems" not in accepted
    assert set(bundles.kept()) == {"dep_1"}

    path = tmp_path / "bundles" / "dep_1.json"
    kept = json.loads(path.read_text())
    data = base64.b64decode(kept["payload"]).replace(b'"A"', b'"B"')
    path.write_text(json.dumps({**kept, "payload": base64.b64encode(data).decode()}))
    assert bundles.kept() == {} and not path.exists()

    # For another Runner, or another deployment than the answer names: refused too.
    assert "another Runner" in bundles.accept(wanted, "run_2")["problems"][0]
    assert (
        "another deployment"
        in bundles.accept({**wanted, "deployment_id": "dep_2"}, None)["problems"][0]
    )
    with pytest.raises(BundleRefused, match="not base64"):
        verify({"payload": "!", "signature": "!"}, _pem(key))
