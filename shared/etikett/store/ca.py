"""The service CA's item in the runners table: its certificate and its private key, encrypted
under a KMS key. Written once, conditionally, so concurrent first uses agree on one CA."""

from __future__ import annotations

import datetime as dt
from typing import NamedTuple

from pynamodb.attributes import BinaryAttribute, UnicodeAttribute, UTCDateTimeAttribute

from etikett.store.base import Item, get_item, item_of, record_of, save_once
from etikett.store.runners import META

CA_KEY = "ca"


class CaRecord(NamedTuple):
    certificate_pem: str
    encrypted_key: bytes  # KMS ciphertext of the PKCS#8 DER key
    kms_key_id: str
    created_at: dt.datetime


class _CaItem(Item):
    Meta = META
    pk = UnicodeAttribute(hash_key=True, default=CA_KEY)
    sk = UnicodeAttribute(range_key=True, default=CA_KEY)
    certificate_pem = UnicodeAttribute()
    encrypted_key = BinaryAttribute(legacy_encoding=False)
    kms_key_id = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()


def get() -> CaRecord | None:
    item = get_item(_CaItem, CA_KEY, CA_KEY)
    return record_of(CaRecord, item) if item is not None else None


def add_once(ca: CaRecord) -> bool:
    """False when another instance stored a CA first (use that one)."""
    return save_once(item_of(_CaItem, ca, pk=CA_KEY, sk=CA_KEY))
