"""Stored credentials (language models and plain secrets), a copy of the default language model
(`#default`), and the credential store's own key. Secrets are stored only sealed (see
`domain/credential_vault.py`): a ciphertext, its data key wrapped by KMS, and the same data key
wrapped under the store key (for a backup restored elsewhere)."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    BinaryAttribute,
    BooleanAttribute,
    ListAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import PutError
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex

from etikett.store.base import Item, condition_failed, get_item, table_meta
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page, read_page

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork

LISTED = "credential"  # every credential's `listing`: the by_ref index lists them all
STORE_KEY = "#store-key"  # refs of credentials never start with "#"
DEFAULT = "#default"


class Sealed(NamedTuple):
    """A secret as stored: AES-GCM `ciphertext` (nonce first) under a data key that KMS wrapped
    (`wrapped_key`, context the credential's ref) and the store key wrapped too (`escrowed_key`)."""

    ciphertext: bytes
    wrapped_key: bytes
    escrowed_key: bytes
    kms_key_id: str
    store_key_id: str


class CredentialRecord(NamedTuple):
    ref: str
    kind: str  # language-model | secret
    provider: str | None
    model: str | None
    endpoint: str | None
    share_sample_values: bool
    created_at: dt.datetime
    created_by: str
    sealed: Sealed | None  # None: a language model without a key (a local model)
    # A secret's allowed origins (`https://host[:port]`); None: it names none (sent anywhere).
    origins: tuple[str, ...] | None = None

    @property
    def has_secret(self) -> bool:
        return self.sealed is not None


class StoreKeyRecord(NamedTuple):
    wrapped_key: bytes  # KMS ciphertext of the 32-byte store key
    kms_key_id: str
    key_id: str  # `csk_…`, a fingerprint that names the key in exports
    created_at: dt.datetime


class _ByRef(GlobalSecondaryIndex["_CredentialItem"]):
    class Meta:
        index_name = "by_ref"
        projection = AllProjection()

    listing = UnicodeAttribute(hash_key=True)
    ref = UnicodeAttribute(range_key=True)


class _ByKind(GlobalSecondaryIndex["_CredentialItem"]):
    class Meta:
        index_name = "by_kind"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    ref = UnicodeAttribute(range_key=True)


class _CredentialItem(Item):
    Meta = table_meta("credentials_table")
    ref = UnicodeAttribute(hash_key=True)
    listing = UnicodeAttribute(null=True)
    kind = UnicodeAttribute(null=True)
    provider = UnicodeAttribute(null=True)
    model = UnicodeAttribute(null=True)
    endpoint = UnicodeAttribute(null=True)
    share_sample_values = BooleanAttribute(default=False)
    origins = ListAttribute(of=UnicodeAttribute, null=True)
    ciphertext = BinaryAttribute(legacy_encoding=False, null=True)
    wrapped_key = BinaryAttribute(legacy_encoding=False, null=True)
    escrowed_key = BinaryAttribute(legacy_encoding=False, null=True)
    kms_key_id = UnicodeAttribute(null=True)
    store_key_id = UnicodeAttribute(null=True)
    default_ref = UnicodeAttribute(null=True)  # the #default item
    key_id = UnicodeAttribute(null=True)  # the #store-key item
    created_at = UTCDateTimeAttribute(null=True)
    created_by = UnicodeAttribute(null=True)
    by_ref = _ByRef()
    by_kind = _ByKind()


def _record(item: _CredentialItem) -> CredentialRecord:
    sealed = None
    if item.ciphertext is not None:
        sealed = Sealed(
            ciphertext=bytes(item.ciphertext),
            wrapped_key=bytes(item.wrapped_key or b""),
            escrowed_key=bytes(item.escrowed_key or b""),
            kms_key_id=str(item.kms_key_id),
            store_key_id=str(item.store_key_id),
        )
    default_copy = item.ref == DEFAULT
    return CredentialRecord(
        ref=str(item.default_ref) if default_copy else item.ref,
        kind="language-model" if default_copy else str(item.kind),
        provider=item.provider,
        model=item.model,
        endpoint=item.endpoint,
        share_sample_values=bool(item.share_sample_values),
        created_at=item.created_at,
        created_by=str(item.created_by),
        sealed=sealed,
        origins=tuple(str(o) for o in item.origins) if item.origins is not None else None,
    )


def _item(record: CredentialRecord, **keys: Any) -> _CredentialItem:
    sealed = record.sealed
    return _CredentialItem(
        provider=record.provider,
        model=record.model,
        endpoint=record.endpoint,
        share_sample_values=record.share_sample_values,
        origins=list(record.origins) if record.origins is not None else None,
        ciphertext=sealed.ciphertext if sealed else None,
        wrapped_key=sealed.wrapped_key if sealed else None,
        escrowed_key=sealed.escrowed_key if sealed else None,
        kms_key_id=sealed.kms_key_id if sealed else None,
        store_key_id=sealed.store_key_id if sealed else None,
        created_at=record.created_at,
        created_by=record.created_by,
        **keys,
    )


def get(ref: str) -> CredentialRecord | None:
    item = get_item(_CredentialItem, ref)
    if item is None or item.listing != LISTED:
        return None
    return _record(item)


def page(limit: int, cursor: str | None) -> Page[CredentialRecord]:
    def query(**page: Any) -> Any:
        return _CredentialItem.by_ref.query(LISTED, **page)

    return read_page(query, {"ref", "listing"}, limit, cursor, _record)


def first_of_kind(kind: str, count: int) -> list[CredentialRecord]:
    """Up to `count` credentials of `kind`, by ref (one query)."""
    return [_record(item) for item in _CredentialItem.by_kind.query(kind, limit=count)]


def default_ref() -> str | None:
    item = get_item(_CredentialItem, DEFAULT)
    return item.default_ref if item is not None else None


def default() -> CredentialRecord | None:
    """The default language model in one read: the #default item is a copy of it (credentials
    never change, so the copy cannot drift), outside both indexes."""
    item = get_item(_CredentialItem, DEFAULT)
    return _record(item) if item is not None else None


def add(uow: UnitOfWork, record: CredentialRecord, *, make_default: bool) -> None:
    """A new credential; the condition `credential.absent` fails if the ref is taken."""
    item = _item(record, ref=record.ref, listing=LISTED, kind=record.kind)
    uow.put(item, _CredentialItem.ref.does_not_exist(), name=ConditionName.CREDENTIAL_ABSENT)
    if make_default:
        uow.put(_item(record, ref=DEFAULT, default_ref=record.ref))


def remove(uow: UnitOfWork, ref: str, *, was_default: bool) -> None:
    """The credential goes (condition `credential.exists`), and the default pointer with it if
    it still names this credential."""
    uow.delete(
        _CredentialItem(ref),
        _CredentialItem.listing == LISTED,
        name=ConditionName.CREDENTIAL_EXISTS,
    )
    if was_default:
        uow.delete(
            _CredentialItem(DEFAULT),
            _CredentialItem.default_ref == ref,
            name=ConditionName.CREDENTIAL_DEFAULT_UNCHANGED,
        )


def store_key() -> StoreKeyRecord | None:
    item = get_item(_CredentialItem, STORE_KEY)
    if item is None:
        return None
    return StoreKeyRecord(
        wrapped_key=bytes(item.wrapped_key or b""),
        kms_key_id=str(item.kms_key_id),
        key_id=str(item.key_id),
        created_at=item.created_at,
    )


def add_store_key(record: StoreKeyRecord) -> bool:
    """Writes the store key once; False if another request wrote one first (read it then)."""
    item = _CredentialItem(
        ref=STORE_KEY,
        wrapped_key=record.wrapped_key,
        kms_key_id=record.kms_key_id,
        key_id=record.key_id,
        created_at=record.created_at,
    )
    try:
        item.save(condition=_CredentialItem.ref.does_not_exist())
    except PutError as error:
        if condition_failed(error):
            return False
        raise
    return True


def raw_item(ref: str) -> dict[str, Any] | None:
    """The stored item as DynamoDB's JSON (what a table export holds), for tests of the backup
    path and the restore tool."""
    item = get_item(_CredentialItem, ref)
    return item.serialize() if item is not None else None
