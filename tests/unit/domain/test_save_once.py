"""Things made once by whoever comes first (the Runner CA, the bundle-signing key): the second
instance learns that the first won, and any other failure of the write is raised, never taken
for the first instance's item."""

from __future__ import annotations

import datetime as dt

import pytest
from pynamodb.exceptions import PutError

from etikett.store import bundle_key, ca

pytestmark = pytest.mark.usefixtures("aws")

NOW = dt.datetime(2026, 11, 28, tzinfo=dt.UTC)


def test_the_first_ca_stored_is_the_one_everybody_uses() -> None:
    first = ca.CaRecord("first", b"key-1", "kms-1", NOW)
    second = ca.CaRecord("second", b"key-2", "kms-1", NOW)
    assert ca.get() is None
    assert ca.add_once(first) is True
    assert ca.add_once(second) is False
    assert ca.get() == first


def test_a_write_refused_for_another_reason_is_raised() -> None:
    """An item DynamoDB refuses (here: over its 400 KB item limit) is an error, not a sign that
    another instance stored its key first."""
    too_large = bundle_key.BundleKeyRecord("p" * 450_000, b"key", "kms-1", NOW)
    with pytest.raises(PutError) as refused:
        bundle_key.add_once(too_large)
    assert refused.value.cause_response_code == "ValidationException"
    assert bundle_key.get() is None
    stored = bundle_key.BundleKeyRecord("public", b"key", "kms-1", NOW)
    assert bundle_key.add_once(stored) is True and bundle_key.get() == stored
