"""Routes of the Authentication group: setup, login, logout, tokens, whoami, own password."""

from __future__ import annotations

from typing import Annotated

from fastapi import Request, Response

from etikett.api.access import SESSION_COOKIE, any_caller, client_address, public, requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import not_in_mcp, router
from etikett.domain.actors import Invocation
from etikett.domain.users import auth, tokens
from etikett.settings import get_settings

routes = router(prefix="/api/v1/auth", tags=["Authentication"])

_LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")


def _set_session_cookie(request: Request, response: Response, token: str) -> None:
    host = (request.url.hostname or "").lower()
    response.set_cookie(
        SESSION_COOKIE,
        token,
        max_age=get_settings().session_ttl_seconds,
        httponly=True,
        samesite="strict",
        secure=host not in _LOOPBACK,  # plain HTTP is only ever local development
        path="/",
    )


@routes.get(
    "/setup",
    operation_id="getAuthSetup",
    response_model=auth.SetupState,
    summary="Probe whether first-time setup is still needed",
    openapi_extra=not_in_mcp(),
)
def get_setup(invocation: Annotated[Invocation, public()]) -> auth.SetupState:
    return auth.setup_state()


@routes.post(
    "/setup",
    operation_id="postAuthSetup",
    response_model=auth.SignedIn,
    status_code=201,
    summary="Create the first admin (only while no user exists) and sign in",
    responses={
        403: {
            "description": "The stack's setup secret is missing or wrong "
            "(`auth.setup_secret_required`)"
        },
        409: {"description": "Setup already done (`auth.setup_done`)"},
    },
    openapi_extra=not_in_mcp(),
)
def post_setup(
    body: auth.SetupRequest,
    request: Request,
    response: Response,
    invocation: Annotated[Invocation, public()],
) -> auth.SignedIn:
    signed_in = auth.setup(invocation, body)
    _set_session_cookie(request, response, signed_in.token)
    return signed_in


@routes.post(
    "/login",
    operation_id="login",
    response_model=auth.SignedIn,
    summary="Sign in with username and password; answers a session token and sets a cookie",
    responses={
        401: {"description": "Username or password is wrong (`auth.invalid_credentials`)"},
        429: {
            "description": "Too many failed logins for this username from this address "
            "(`auth.login_throttled`); retry after `Retry-After` seconds"
        },
    },
    openapi_extra=not_in_mcp(),
)
def login(
    body: auth.Credentials,
    request: Request,
    response: Response,
    invocation: Annotated[Invocation, public()],
) -> auth.SignedIn:
    signed_in = auth.login(invocation, body, client_address(request))
    _set_session_cookie(request, response, signed_in.token)
    return signed_in


@routes.post(
    "/logout",
    operation_id="logout",
    status_code=204,
    summary="End the current session and clear its cookie",
    responses={409: {"description": "Not a session (`auth.not_a_session`)"}},
    openapi_extra=not_in_mcp(),
)
def logout(invocation: Annotated[Invocation, any_caller()]) -> Response:
    auth.logout(invocation)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@routes.post(
    "/tokens",
    operation_id="createApiToken",
    response_model=tokens.IssuedApiToken,
    status_code=201,
    summary="Issue a service-account token",
    description="Issues a token for an agent identity with one role. The secret `token` is "
    "in this answer only; store it as a secret. Without `expires_at` it never "
    "expires.",
)
def create_token(
    body: tokens.NewApiToken, invocation: Annotated[Invocation, requires("admin")]
) -> tokens.IssuedApiToken:
    return tokens.issue_api_token(invocation, body)


@routes.get(
    "/tokens",
    operation_id="listApiTokens",
    response_model=ItemList[tokens.ApiToken],
    summary="List service-account tokens (never their secrets), newest first",
)
def list_tokens(
    invocation: Annotated[Invocation, requires("admin")],
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
) -> ItemList[tokens.ApiToken]:
    return ItemList[tokens.ApiToken].of(tokens.list_api_tokens(limit, cursor))


@routes.delete(
    "/tokens/{id}",
    operation_id="deleteApiToken",
    status_code=204,
    summary="Revoke a service-account token; it stops working at once",
    responses={404: {"description": "Unknown token (`token.not_found`)"}},
)
def delete_token(id: str, invocation: Annotated[Invocation, requires("admin")]) -> Response:
    tokens.revoke_api_token(invocation, id)
    return Response(status_code=204)


@routes.get(
    "/whoami",
    operation_id="getWhoami",
    response_model=auth.WhoAmI,
    summary="Identify the caller: actor kind (human or service), subject and roles",
)
def whoami(invocation: Annotated[Invocation, any_caller()]) -> auth.WhoAmI:
    assert invocation.caller is not None
    return auth.whoami(invocation.caller)


@routes.post(
    "/password",
    operation_id="postAuthPassword",
    status_code=204,
    summary="Change your own password (people only); ends your other sessions",
)
def change_password(
    body: auth.PasswordChange, invocation: Annotated[Invocation, any_caller(human=True)]
) -> Response:
    auth.change_own_password(invocation, body)
    return Response(status_code=204)
