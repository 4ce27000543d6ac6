"""The tokens table: service-account tokens and session tokens, keyed by the secret's SHA-256."""

from __future__ import annotations

from pynamodb.attributes import TTLAttribute, UnicodeAttribute, UTCDateTimeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

SERVICE_OWNER = "service"


class TokensById(GlobalSecondaryIndex["TokenRecord"]):
    class Meta:
        index_name = "by_id"
        projection = AllProjection()

    id = UnicodeAttribute(hash_key=True)


class TokensByOwner(GlobalSecondaryIndex["TokenRecord"]):
    class Meta:
        index_name = "by_owner"
        projection = AllProjection()

    owner = UnicodeAttribute(hash_key=True)
    id = UnicodeAttribute(range_key=True)


class TokenRecord(Model):
    Meta = table_meta("tokens_table")

    token_hash = UnicodeAttribute(
        hash_key=True
    )  # hex SHA-256 of the secret; the secret is never stored
    id = UnicodeAttribute()  # tok_… (service) or ses_… (session)
    kind = UnicodeAttribute()  # "service" | "session"
    owner = UnicodeAttribute()  # SERVICE_OWNER, or the user id of a session
    subject = UnicodeAttribute()
    role = UnicodeAttribute(null=True)  # service tokens carry one role; sessions take the user's
    user_id = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    expires_at = UTCDateTimeAttribute(null=True)
    revoked_at = UTCDateTimeAttribute(null=True)
    expires = TTLAttribute(null=True)  # lets DynamoDB drop dead sessions; reads check expiry too

    by_id = TokensById()
    by_owner = TokensByOwner()
