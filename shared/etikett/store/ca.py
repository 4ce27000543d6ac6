"""The service CA's item in the runners table: its certificate and its private key, encrypted
under a KMS key. Written once, conditionally, so concurrent first uses agree on one CA."""

from __future__ import annotations

from pynamodb.attributes import BinaryAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.models import Model

from etikett.store.runners import _META

CA_KEY = "ca"


class CaRecord(Model):
    Meta = _META
    pk = UnicodeAttribute(hash_key=True, default=CA_KEY)
    sk = UnicodeAttribute(range_key=True, default=CA_KEY)
    certificate_pem = UnicodeAttribute()
    encrypted_key = BinaryAttribute(legacy_encoding=False)  # KMS ciphertext of the PKCS#8 DER key
    kms_key_id = UnicodeAttribute()
    created_at = UTCDateTimeAttribute()
