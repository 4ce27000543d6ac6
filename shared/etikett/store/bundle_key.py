"""The key that signs deployment bundles, in the runners table beside the CA: its Ed25519 private
key encrypted under a KMS key. Written once, conditionally, so concurrent first uses agree."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from pynamodb.attributes import BinaryAttribute, UnicodeAttribute, UTCDateTimeAttribute

from etikett.store.base import Item, get_item, item_of, record_of, save_once
from etikett.store.runners import META

BUNDLE_KEY = "bundle-key"


class BundleKeyRecord(NamedTuple):
    public_key_pem: str
    encrypted_key: bytes  # KMS ciphertext of the raw 32-byte Ed25519 private key
    kms_key_id: str
    created_at: dt.datetime


class _BundleKeyItem(Item):
    Meta = META
    pk = UnicodeAttribute(hash_key=True, default=BUNDLE_KEY)
    sk = UnicodeAttribute(range_key=True, default=BUNDLE_KEY)
    public_key_pem = UnicodeAttribute()
    encrypted_key = BinaryAttribute(legacy_encoding=False)
    kms_key_id = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()


def get() -> BundleKeyRecord | None:
    item = get_item(_BundleKeyItem, BUNDLE_KEY, BUNDLE_KEY)
    return record_of(BundleKeyRecord, item) if item is not None else None


def add_once(record: BundleKeyRecord) -> bool:
    """False when another instance stored a key first (use that one)."""
    return save_once(item_of(_BundleKeyItem, record, pk=BUNDLE_KEY, sk=BUNDLE_KEY))
