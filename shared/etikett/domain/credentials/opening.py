"""Credentials opened for use: the language model an AI operation uses, with its API key, and a
flow's secret with its allowed origins for the Runners whose deployed flow names it. Keys are
opened once per warm container; a value is never logged or answered elsewhere. A credential's
test opens it (and asks a language model for one word)."""

import time

from etikett.ai.conversation import PROVIDERS, Endpoint, Request, Turn
from etikett.domain.credentials import credential_vault
from etikett.domain.credentials.credentials import LANGUAGE_MODEL, SECRET, CredentialTest, load
from etikett.store import credentials as store
from etikett.store.credentials import CredentialRecord, Sealed
from etikett_engine.errors import Conflict, InvalidRequest, ProblemCode, ProviderFailed


def endpoint_of(record: CredentialRecord) -> Endpoint:
    if record.kind != LANGUAGE_MODEL:
        raise InvalidRequest(
            f"The credential {record.ref!r} is a secret, not a language model.",
            ProblemCode.CREDENTIAL_NOT_LANGUAGE_MODEL,
            ref=record.ref,
        )
    api_key = _opened(record.ref, record.sealed) if record.sealed is not None else None
    provider = record.provider if record.provider in PROVIDERS else "generic-json"
    return Endpoint(
        provider=provider,
        model=str(record.model),
        url=str(record.endpoint),
        api_key=api_key,
    )


def secret_with_origins(ref: str) -> tuple[str, tuple[str, ...] | None]:
    """A `secret` credential's plain value and its allowed origins (None: it names none), for
    the Runners whose deployed flow names it (`runner_flows`, over the mutual-TLS agent channel
    only). Never log or answer the value elsewhere."""
    record = load(ref)
    if record.kind != SECRET or record.sealed is None:
        raise InvalidRequest(
            f"The credential {ref!r} is a language model, not a secret.",
            ProblemCode.CREDENTIAL_NOT_SECRET,
            ref=ref,
        )
    return _opened(ref, record.sealed), record.origins


_keys: dict[tuple[str, bytes], str] = {}


def _opened(ref: str, sealed: Sealed) -> str:
    """A language model's key, opened once per warm container: a KMS call per AI request would
    be most of the service's own time. The wrapped data key is part of the cache key, so a
    credential deleted and made again under the same ref is opened anew."""
    cache_key = (ref, sealed.wrapped_key)
    if cache_key not in _keys:
        if len(_keys) > 100:
            _keys.clear()
        _keys[cache_key] = credential_vault.open_secret(ref, sealed)
    return _keys[cache_key]


def language_model(ref: str | None) -> tuple[CredentialRecord, Endpoint]:
    """The credential an AI operation uses: the one named, else the default, else the only
    language model; none is 409 `ai.no_credential`."""
    record: CredentialRecord | None
    if ref is not None:
        record = load(ref)
    else:
        record = store.default()
        if record is None:
            found = store.first_of_kind(LANGUAGE_MODEL, 2)
            if len(found) != 1:
                raise Conflict(
                    "No language-model credential to use: name one with `credential`, or mark "
                    "one as default."
                    if found
                    else "No language-model credential exists; an admin creates one with "
                    "createCredential.",
                    ProblemCode.AI_NO_CREDENTIAL,
                    candidates=len(found),
                )
            record = found[0]
    return record, endpoint_of(record)


def test(ref: str) -> CredentialTest:
    """A language model is asked for a one-word answer; a secret is opened. A failure is an
    answer with `ok: false` and its code, not an error."""
    # Loaded here, not at the credentials function's cold start.
    from etikett.ai import client

    record = load(ref)
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    if record.kind != LANGUAGE_MODEL:
        if record.sealed is not None:
            credential_vault.open_secret(record.ref, record.sealed)
        return CredentialTest(ok=True, latency_ms=elapsed(), detail="The secret opens.")
    endpoint = endpoint_of(record)
    started = time.monotonic()
    try:
        reply = client.complete(
            endpoint,
            Request(
                system="You are checking a connection. Answer with the single word OK.",
                turns=(Turn(role="user", text="Say OK."),),
                max_tokens=16,
            ),
            # Retries a 429 after its retry-after like every AI call (the default retries and
            # deadline); an attempt that hangs is cut after 10 s.
            limits=client.Limits(timeout=10.0),
        )
    except ProviderFailed as failure:
        return CredentialTest(
            ok=False, latency_ms=elapsed(), code=str(failure.code), detail=failure.detail
        )
    return CredentialTest(ok=True, latency_ms=elapsed(), model=reply.model or endpoint.model)
