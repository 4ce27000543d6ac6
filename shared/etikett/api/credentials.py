"""Routes of the Credentials group: language models and secrets, stored encrypted; admin only."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Body, Response

from etikett.api import ai_examples
from etikett.api.access import requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import not_in_mcp, router
from etikett.domain.actors import Invocation
from etikett.domain.credentials import credentials, opening

routes = router(prefix="/api/v1/credentials", tags=["Credentials"])
Admin = Annotated[Invocation, requires("admin")]
_NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"description": "Unknown credential (`credential.not_found`)"}
}
_EXAMPLES = {
    "language model": {
        "value": {
            "ref": "claude",
            "kind": "language-model",
            "provider": "anthropic-messages",
            "model": "claude-sonnet-4-5",
            "endpoint": "https://api.anthropic.com",
            "apiKey": "sk-ant-api03-your-key",
            "default": True,
        }
    },
    "local model": {
        "value": {
            "ref": "local",
            "kind": "language-model",
            "provider": "openai-chat",
            "model": "llama3.2",
            "endpoint": "http://127.0.0.1:11434/v1",
        }
    },
    "secret": {"value": {"ref": "erp-token", "kind": "secret", "value": "erp-password"}},
}


@routes.get(
    "",
    operation_id="listCredentials",
    response_model=ItemList[credentials.Credential],
    response_model_by_alias=True,
    summary="List stored credentials by ref (never their secrets: `has_secret` says if one is "
    "stored)",
)
def list_credentials(
    invocation: Admin, limit: Limit = DEFAULT, cursor: Cursor = None
) -> ItemList[credentials.Credential]:
    return ItemList[credentials.Credential].of(credentials.list_credentials(limit, cursor))


@routes.post(
    "",
    operation_id="createCredential",
    response_model=credentials.Credential,
    status_code=201,
    summary="Store a language-model credential or a secret, encrypted (KMS envelope, AES-GCM)",
    responses={
        409: {"description": "The ref is taken (`credential.exists`)"},
        422: {
            "description": "Invalid request (`request.invalid`; `credential.endpoint_refused`: "
            "not HTTPS and not loopback, or a query string)"
        },
    },
)
def create_credential(
    body: Annotated[credentials.NewCredential, Body(openapi_examples=_EXAMPLES)],
    invocation: Admin,
) -> credentials.Credential:
    return credentials.create(invocation, body)


@routes.delete(
    "/{ref}",
    operation_id="deleteCredential",
    status_code=204,
    summary="Delete a credential and its encrypted secret",
    responses=_NOT_FOUND,
)
def delete_credential(ref: str, invocation: Admin) -> Response:
    credentials.delete(invocation, ref)
    return Response(status_code=204)


@routes.post(
    "/{ref}/test",
    operation_id="postCredentialTest",
    response_model=credentials.CredentialTest,
    summary="Try a credential: a language model is asked for one word; a failing provider is "
    "`ok: false` with its code (`ai.unreachable`, `ai.unauthorized`, `ai.rate_limited`, "
    "`ai.bad_response`)",
    responses=_NOT_FOUND,
)
def post_credential_test(ref: str, invocation: Admin) -> credentials.CredentialTest:
    return opening.test(ref)


@routes.post(
    "/master-key/export",
    operation_id="exportCredentialMasterKey",
    response_model=credentials.MasterKeyExport,
    summary="Export the credential store's key wrapped under a passphrase (Argon2id + "
    "AES-256-GCM), to restore a backup elsewhere; a person in a session only",
    responses={422: {"description": "Passphrase too weak (`credential.passphrase_weak`)"}},
    openapi_extra=not_in_mcp(),
)
def export_credential_master_key(
    body: Annotated[credentials.MasterKeyExportRequest, ai_examples.EXPORT_REQUEST],
    invocation: Annotated[Invocation, requires("admin", human=True)],
) -> credentials.MasterKeyExport:
    return credentials.export_master_key(invocation, body.passphrase)
