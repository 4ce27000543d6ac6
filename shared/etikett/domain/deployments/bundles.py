"""A deployment's bundle: what a Runner needs to print a deployed flow version without the
service — the flow version, its effective context and printer aliases, and the approved label
versions its print nodes name — signed with the service's Ed25519 bundle key, so that a Runner
prints only what the service deployed (docs/concepts/offline-sites.md).

The key is made on first use and kept like the Runner CA's: its private half encrypted under the
CA's KMS key (moto's KMS in local mode), with its own encryption context. Runners get the public
half with their configuration (`getRunnerConfig`) and pin it in their state directory.
Credentials never go into a bundle: a Runner keeps them in memory only.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import lru_cache
from typing import Any

from etikett import clock
from etikett.settings import get_settings
from etikett.store import bundle_key, keys
from etikett.store.bundle_key import BundleKeyRecord

# `cryptography` is imported in the functions that sign a bundle: the Deployments function's
# cold start does not load it.

FORMAT = 1
KMS_CONTEXT = {"purpose": "etikett-deployment-bundles"}


def canonical(payload: dict[str, Any]) -> bytes:
    """The bytes that are signed: sorted keys, no spaces, UTF-8 (the Runner checks these bytes
    as they came, never a re-serialization)."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def _generate(kms_key_id: str) -> BundleKeyRecord:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    raw = key.private_bytes(
        serialization.Encoding.Raw, serialization.PrivateFormat.Raw, serialization.NoEncryption()
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    return BundleKeyRecord(
        public_key_pem=public.decode(),
        encrypted_key=keys.encrypt(kms_key_id, raw, KMS_CONTEXT),
        kms_key_id=kms_key_id,
        created_at=clock.now(),
    )


@lru_cache(maxsize=1)
def _record() -> BundleKeyRecord:
    existing = bundle_key.get()
    if existing is not None:
        return existing
    record = _generate(get_settings().required("ca_kms_key"))
    if not bundle_key.add_once(record):
        stored = bundle_key.get()  # another instance won the race: use its key
        assert stored is not None
        return stored
    return record


@lru_cache(maxsize=1)
def _private_key() -> Any:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    record = _record()
    raw = keys.decrypt(record.kms_key_id, record.encrypted_key, KMS_CONTEXT)
    return Ed25519PrivateKey.from_private_bytes(raw)


def public_key_pem() -> str:
    """The public half, PEM (SubjectPublicKeyInfo): what a Runner verifies bundles with."""
    return str(_record().public_key_pem)


def key_id(public_pem: str) -> str:
    """A short name of a public key: its PEM's SHA-256, first 16 hex digits."""
    return hashlib.sha256(public_pem.encode()).hexdigest()[:16]


def sign(payload: dict[str, Any]) -> dict[str, str]:
    """{key_id, payload (base64 of the canonical bytes), signature (base64)}. Ed25519 is
    deterministic: the same deployment state gives the same bundle, so a Runner asking again
    sees no change."""
    data = canonical({**payload, "format": FORMAT})
    return {
        "key_id": key_id(public_key_pem()),
        "payload": base64.b64encode(data).decode(),
        "signature": base64.b64encode(_private_key().sign(data)).decode(),
    }


def printable_labels(document: dict[str, Any]) -> tuple[list[dict[str, Any]], list[str]]:
    """The label versions the flow's print nodes name that may print (approved; `lbl_…` the
    released version, `lbl_…@N` version N), each {reference, label_id, version, document}; and
    why a named label cannot print offline (not released, not approved, gone): its records then
    print only through the service."""
    from etikett.domain.labels import label_records
    from etikett.domain.printing.print_targets import parse_reference
    from etikett_engine.errors import EtikettError

    references = sorted(
        {
            str(node.get("label"))
            for node in document.get("nodes") or []
            if isinstance(node, dict) and node.get("type") == "action.print"
        }
    )
    labels, reasons = [], []
    for reference in references:
        try:
            label_id, named = parse_reference(reference)
            version = named or label_records.load_label(label_id).released_version
            if not version:
                reasons.append(f"{reference} has no released version")
                continue
            record = label_records.load_version(label_id, "label", version)
        except EtikettError as error:
            reasons.append(f"{reference}: {error}")
            continue
        if record.status != "approved":
            reasons.append(f"version {version} of {label_id} is {record.status}")
            continue
        labels.append(
            {
                "reference": reference,
                "label_id": label_id,
                "version": version,
                "document": record.document,
            }
        )
    return labels, reasons
