"""Stored credentials: language models (provider, model, endpoint, an optional API key) and plain
secrets (for flows' HTTP nodes). Admin only; creating and deleting is audited. A secret is sealed
before it is stored (`credential_vault`) and is never in a list, an answer, a log line, an audit
entry or an error: answers say `has_secret`."""

import ipaddress
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import ConfigDict, Field, field_validator

from etikett import clock
from etikett.ai.conversation import Provider
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.credentials import credential_vault
from etikett.store import credentials as store
from etikett.store.conditions import ConditionName
from etikett.store.credentials import CredentialRecord
from etikett.store.pages import Page
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import (
    Conflict,
    InvalidRequest,
    NotFound,
    ProblemCode,
)
from etikett_engine.model import Model

REF = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"
LANGUAGE_MODEL = "language-model"
SECRET = "secret"


class NewLanguageModel(Model):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    ref: str = Field(pattern=REF, description="The name flows and AI operations use.")
    kind: Literal["language-model"]
    provider: Provider = Field(
        description="The wire format: `anthropic-messages` (POST {endpoint}/v1/messages), "
        "`openai-chat` (POST {endpoint}/chat/completions; also local model servers), "
        "`generic-json` (POST {endpoint} with {model, system, prompt}, reads {text}; "
        "explanations only, no Copilots)."
    )
    model: str = Field(min_length=1, max_length=200)
    endpoint: str = Field(
        min_length=1,
        max_length=2048,
        description="HTTPS; plain HTTP only to loopback. No query string (put keys in apiKey).",
        examples=["https://api.anthropic.com", "http://127.0.0.1:11434/v1"],
    )
    api_key: str | None = Field(
        default=None,
        alias="apiKey",
        min_length=1,
        max_length=4096,
        # It travels as an HTTP header value: visible ASCII only, or no request could carry it.
        pattern=r"^[\x21-\x7e]+$",
        description="Stored encrypted; never shown again (a local model may need none). "
        "Visible ASCII characters, as an HTTP header carries them.",
        json_schema_extra={"writeOnly": True},
    )
    share_sample_values: bool = Field(
        default=False,
        alias="shareSampleValues",
        description="When on, Copilots send the document's saved sample values to the model.",
    )
    default: bool = Field(
        default=False, description="The language model AI operations use when none is named."
    )


class NewSecret(Model):
    model_config = ConfigDict(extra="forbid")
    ref: str = Field(pattern=REF)
    kind: Literal["secret"]
    value: str = Field(
        min_length=1,
        max_length=8192,
        description="Stored encrypted; never shown again.",
        json_schema_extra={"writeOnly": True},
    )
    origins: list[Annotated[str, Field(min_length=1, max_length=300)]] | None = Field(
        default=None,
        min_length=1,
        max_length=20,
        description="Where the secret may be sent: origins (`https://host[:port]`, plain "
        "http:// only to loopback; no path, no wildcard). A flow's action.http naming it "
        "elsewhere is a lint error (`flow.credential_origin_refused`); no Runner gets it for "
        "such a flow, and a Runner refuses to send it elsewhere. Without origins it goes "
        "wherever a flow sends it, and lint warns (`flow.credential_unbound`).",
        examples=[["https://erp.example.com"]],
    )

    @field_validator("origins")
    @classmethod
    def _origins(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        # Loaded here, not at the credentials function's cold start.
        from etikett_engine.dsl.origins import parse_origin

        normal = []
        for index, text in enumerate(value):
            try:
                normal.append(parse_origin(text))
            except ValueError as error:
                raise ValueError(f"origin {index} ({text[:100]!r}) {error}") from None
        return sorted(set(normal))


NewCredential = Annotated[NewLanguageModel | NewSecret, Field(discriminator="kind")]


class Credential(Model):
    ref: str
    kind: Literal["language-model", "secret"]
    provider: Provider | None = None
    model: str | None = None
    endpoint: str | None = None
    share_sample_values: bool | None = Field(default=None, serialization_alias="shareSampleValues")
    default: bool = False
    has_secret: bool
    origins: list[str] | None = Field(
        default=None,
        description="A secret's allowed origins; null: it names none (sent wherever a flow "
        "sends it).",
    )
    created_at: str
    created_by: str

    model_config = ConfigDict(populate_by_name=True)


class CredentialTest(Model):
    ok: bool
    latency_ms: int
    code: str | None = Field(default=None, examples=["ai.unauthorized"])
    detail: str | None = None
    model: str | None = Field(default=None, description="The model that answered.")


class MasterKeyExportRequest(Model):
    model_config = ConfigDict(extra="forbid")
    passphrase: str = Field(
        min_length=1,
        max_length=1024,
        description="Protects the exported key (Argon2id + AES-256-GCM). At least 12 "
        "characters; keep it apart from the export.",
        json_schema_extra={"writeOnly": True},
    )


class KdfParameters(Model):
    name: Literal["argon2id"]
    salt: str = Field(description="base64")
    time_cost: int
    memory_cost_kib: int
    parallelism: int


class CipherParameters(Model):
    name: Literal["AES-256-GCM"]
    nonce: str = Field(description="base64, 12 bytes")


class MasterKeyExport(Model):
    format: Literal["etikett.credential-store-key"]
    version: int
    key_id: str = Field(description="`csk_…`: names the store key; also the cipher's AAD.")
    created_at: str
    kdf: KdfParameters
    cipher: CipherParameters
    ciphertext: str = Field(description="base64 of the AES-GCM ciphertext and tag of the key")


def view(record: CredentialRecord, default_ref: str | None) -> Credential:
    model = record.kind == LANGUAGE_MODEL
    return Credential(
        ref=record.ref,
        kind=record.kind,
        provider=record.provider if model else None,
        model=record.model,
        endpoint=record.endpoint,
        share_sample_values=record.share_sample_values if model else None,
        default=model and record.ref == default_ref,
        has_secret=record.has_secret,
        origins=list(record.origins) if record.origins is not None else None,
        created_at=clock.rfc3339(record.created_at),
        created_by=record.created_by,
    )


def _not_found(ref: str) -> NotFound:
    return NotFound(f"No credential {ref!r}.", ProblemCode.CREDENTIAL_NOT_FOUND, ref=ref)


def load(ref: str) -> CredentialRecord:
    record = store.get(ref)
    if record is None:
        raise _not_found(ref)
    return record


def list_credentials(limit: int, cursor: str | None) -> Page[Credential]:
    found = store.page(limit, cursor)
    default_ref = store.default_ref()
    return Page(
        items=[view(record, default_ref) for record in found.items],
        next_cursor=found.next_cursor,
    )


def check_endpoint(endpoint: str) -> str:
    # Loaded here, not at the credentials function's cold start.
    from etikett.domain import outgoing

    try:
        outgoing.check_url(endpoint)
        parts = urlsplit(endpoint)
        if parts.query:
            raise outgoing.UrlRefused("must not contain a query string (put keys in apiKey)")
        _check_named_address(parts.hostname or "", parts.port)
    except outgoing.UrlRefused as refused:
        raise InvalidRequest(
            f"The endpoint is refused: {refused}.",
            ProblemCode.CREDENTIAL_ENDPOINT_REFUSED,
            fields=[{"field": "body.endpoint", "message": str(refused), "type": "value_error"}],
        ) from None
    return endpoint


def _check_named_address(host: str, port: int | None) -> None:
    """An endpoint that names an address the service never connects to (link-local, where cloud
    metadata lives; multicast, unspecified, reserved) is refused when it is stored, not first
    when it is used, by outgoing's own rules. Loopback and private addresses are left to
    outgoing's policy, names to the connection (what a name resolves to can change)."""

    # Loaded here, not at the credentials function's cold start.
    from etikett_engine import outgoing

    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return  # a name, not an address
    try:
        outgoing.checked_addresses(host, port or 443, private_allowed=True)
    except outgoing.AddressRefused as refused:
        raise outgoing.UrlRefused(f"it names {refused.reason}") from None


def create(invocation: Invocation, request: NewLanguageModel | NewSecret) -> Credential:
    caller = invocation.caller
    assert caller is not None
    if isinstance(request, NewLanguageModel):
        check_endpoint(request.endpoint)
        secret = request.api_key
    else:
        secret = request.value
    sealed = credential_vault.seal(request.ref, secret) if secret is not None else None
    model = isinstance(request, NewLanguageModel)
    record = CredentialRecord(
        ref=request.ref,
        kind=request.kind,
        provider=request.provider if isinstance(request, NewLanguageModel) else None,
        model=request.model if isinstance(request, NewLanguageModel) else None,
        endpoint=request.endpoint if isinstance(request, NewLanguageModel) else None,
        share_sample_values=request.share_sample_values
        if isinstance(request, NewLanguageModel)
        else False,
        created_at=clock.now(),
        created_by=caller.subject,
        sealed=sealed,
        origins=tuple(request.origins)
        if isinstance(request, NewSecret) and request.origins is not None
        else None,
    )
    make_default = isinstance(request, NewLanguageModel) and request.default
    details: dict[str, Any] = {"ref": record.ref, "kind": record.kind, "has_secret": bool(sealed)}
    if not model:
        details["origins"] = list(record.origins) if record.origins is not None else None
    if model:
        details.update(
            provider=record.provider,
            model=record.model,
            endpoint=record.endpoint,
            default=make_default,
            share_sample_values=record.share_sample_values,
        )
    taken = Conflict(
        f"A credential {request.ref!r} exists; delete it first to replace it.",
        ProblemCode.CREDENTIAL_EXISTS,
        ref=request.ref,
    )
    entry = audit.record(invocation, request.ref, details=details)
    with UnitOfWork(entry, errors={ConditionName.CREDENTIAL_ABSENT: taken}) as uow:
        store.add(uow, record, make_default=make_default)
    return view(record, record.ref if make_default else store.default_ref())


def delete(invocation: Invocation, ref: str) -> None:
    record = load(ref)
    was_default = store.default_ref() == ref
    entry = audit.record(invocation, ref, details={"ref": ref, "kind": record.kind})
    with UnitOfWork(entry, errors={ConditionName.CREDENTIAL_EXISTS: _not_found(ref)}) as uow:
        store.remove(uow, ref, was_default=was_default)


def export_master_key(invocation: Invocation, passphrase: str) -> MasterKeyExport:
    credential_vault.check_passphrase(passphrase)
    key, key_id = credential_vault.store_key()
    document = credential_vault.wrap_for_export(key, key_id, passphrase)
    with UnitOfWork(
        audit.record(invocation, key_id, details={"key_id": key_id, "kdf": "argon2id"})
    ):
        pass  # the export changes nothing; its audit entry is written alone
    return MasterKeyExport.model_validate(document)
