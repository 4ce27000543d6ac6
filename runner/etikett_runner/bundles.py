"""Deployment bundles on the site: each deployed flow comes with a bundle the service signed
(Ed25519) — the flow version, its context and printer aliases, the approved label versions it
prints — which the Runner verifies with the key it pinned, keeps in its state directory (0600,
never inside a watched root) and runs from. A bundle that fails its check is refused: its
deployment is reported `failed` with the reason, and nothing of it runs.

The key: the first the service's configuration names is pinned in `bundle-key.pem`; a different
key offered later is refused (a new key comes with a new enrollment), so whoever could change
the answers on the way, or the files in the state directory, cannot make the Runner print
something the service did not deploy."""

from __future__ import annotations

import base64
import binascii
import json
import logging
import re
from pathlib import Path
from typing import Any

from etikett_runner.files import remove, write_private

log = logging.getLogger(__name__)

FORMAT = 1
_DEPLOYMENT_ID = re.compile(r"[A-Za-z0-9_\-]{1,128}")
# The spec's fields a bundle decides: what runs is what was signed, never the unsigned answer.
SIGNED_FIELDS = ("deployment_id", "flow_id", "version", "document", "context", "printers")


class BundleRefused(ValueError):
    """The bundle is not the service's, or not for this Runner: the message says why."""


def _public_key(pem: str) -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    key = load_pem_public_key(pem.encode())
    if not isinstance(key, Ed25519PublicKey):
        raise BundleRefused("the pinned bundle key is not an Ed25519 key")
    return key


def verify(bundle: Any, public_pem: str) -> dict[str, Any]:
    """The bundle's payload if its signature is the pinned key's over exactly its bytes."""
    from cryptography.exceptions import InvalidSignature

    if not isinstance(bundle, dict):
        raise BundleRefused("the bundle is not an object")
    try:
        data = base64.b64decode(str(bundle.get("payload", "")), validate=True)
        signature = base64.b64decode(str(bundle.get("signature", "")), validate=True)
    except (binascii.Error, ValueError) as error:
        raise BundleRefused("the bundle is not base64") from error
    try:
        _public_key(public_pem).verify(signature, data)
    except InvalidSignature as error:
        raise BundleRefused("its signature is not the service's (tampered or foreign)") from error
    payload = json.loads(data)
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise BundleRefused(f"unknown bundle format {payload.get('format')!r}")
    return payload


class SiteBundles:
    """The pinned key and the bundles kept, in the state directory."""

    def __init__(self, state_root: Path) -> None:
        self.key_file = state_root / "bundle-key.pem"
        self.folder = state_root / "bundles"

    @property
    def key(self) -> str | None:
        return self.key_file.read_text() if self.key_file.exists() else None

    def pin(self, offered: str | None) -> None:
        """Pin the service's key the first time it is offered; log a different one (refused:
        bundles stay checked by the pinned key)."""
        if not offered:
            return
        pinned = self.key
        if pinned is None:
            _public_key(offered)  # a key that does not load is never pinned
            write_private(self.key_file, offered.encode())
            log.info("deployment bundles: the service's key is pinned")
        elif pinned.strip() != offered.strip():
            log.error("deployment bundles: the service offers another key; keeping the pinned one")

    def accept(self, spec: dict[str, Any], runner_id: str | None) -> dict[str, Any]:
        """The spec to run: its signed fields from its verified bundle, which is kept. A spec
        without a bundle runs as the service sent it (it cannot print offline); a refused
        bundle makes the spec one that cannot start, with the reason."""
        bundle = spec.get("bundle")
        if bundle is None:
            return spec
        try:
            pinned = self.key
            if pinned is None:
                raise BundleRefused("no bundle key is pinned (the configuration named none)")
            payload = verify(bundle, pinned)
            if payload.get("deployment_id") != spec.get("deployment_id"):
                raise BundleRefused("it is for another deployment")
            if runner_id is not None and payload.get("runner_id") != runner_id:
                raise BundleRefused("it is for another Runner")
        except BundleRefused as refused:
            reason = f"the deployment's bundle is refused: {refused}"
            log.error("flow %s (%s): %s", spec.get("flow_id"), spec.get("deployment_id"), reason)
            return {**spec, "problems": [*(spec.get("problems") or []), reason]}
        self.keep(str(payload["deployment_id"]), bundle)
        return {**spec, **{field: payload[field] for field in SIGNED_FIELDS}, "signed": payload}

    def _path(self, deployment_id: str) -> Path:
        if not _DEPLOYMENT_ID.fullmatch(deployment_id):
            raise BundleRefused(f"no deployment id: {deployment_id!r}")
        return self.folder / f"{deployment_id}.json"

    def keep(self, deployment_id: str, bundle: dict[str, Any]) -> None:
        path = self._path(deployment_id)
        data = json.dumps(bundle, sort_keys=True).encode()
        if path.exists() and path.read_bytes() == data:
            return
        self.folder.mkdir(mode=0o700, exist_ok=True)
        write_private(path, data)

    def kept(self) -> dict[str, dict[str, Any]]:
        """Deployment id → the payload of each kept bundle that still verifies; one that does
        not (changed on disk) is refused, logged and removed."""
        pinned = self.key
        found: dict[str, dict[str, Any]] = {}
        if pinned is None or not self.folder.exists():
            return found
        for path in sorted(self.folder.glob("*.json")):
            try:
                payload = verify(json.loads(path.read_bytes()), pinned)
                if f"{payload.get('deployment_id')}.json" != path.name:
                    raise BundleRefused("it is kept under another deployment's name")
            except (BundleRefused, ValueError) as refused:
                log.error("deployment bundle %s refused: %s", path.name, refused)
                remove(path)
                continue
            found[str(payload["deployment_id"])] = payload
        return found

    def forget(self, deployment_ids: set[str]) -> None:
        """Remove the bundles of deployments no longer wanted here."""
        if not self.folder.exists():
            return
        for path in self.folder.glob("*.json"):
            if path.stem not in deployment_ids:
                remove(path)
