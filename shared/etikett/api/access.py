"""Who may call an operation: one dependency per route declares it, and everything reads that.

`requires("designer")` both guards the route at request time and publishes the rule in the OpenAPI
document (`x-etikett-access`), from which the MCP catalog filters tools by role; so REST and MCP
cannot disagree.

The same dependency is where a request is checked as a browser could have sent it: a change that
carries no `Authorization` header must come from a page of this origin, a change authenticated by
the session cookie must carry the console's `X-Etikett-CSRF` header (a header no other site can
make a browser send, since this API answers no CORS preflight), and a body must be of the type the
operation declares (JSON; form data only where an operation takes an upload). Bearer requests are
not browser-borne and only meet the last rule.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from fastapi import Depends, Request, params

from etikett.domain.actors import ROLES, Caller, Invocation
from etikett.store.numbers import refuse_unstorable
from etikett_engine.errors import Forbidden, ProblemCode, Unauthenticated, UnsupportedMediaType

if TYPE_CHECKING:
    from etikett.store.base import ReadAlong

# Names, from its request, what an operation will read (`requires(read_along=…)`); None: nothing.
ReadAhead = Callable[[Request], Awaitable["ReadAlong | None"]]

SESSION_COOKIE = "etikett_session"
CSRF_HEADER = "X-Etikett-CSRF"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
JSON_MEDIA_TYPE = "application/json"
FORM_MEDIA_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")
# Set by the MCP endpoint on its in-process requests: cookies ignored, caller is a service actor.
VIA_MCP_SCOPE_KEY = "etikett.via_mcp"
# Also set there: the caller the endpoint authenticated from this request's bearer token a moment
# before, so that the operation does not read the token again. Only in-process code can put a key
# into an ASGI scope; a request from outside never carries one.
MCP_CALLER_SCOPE_KEY = "etikett.via_mcp.caller"


class Access:
    """The access rule of one operation, callable as its FastAPI dependency."""

    def __init__(
        self,
        roles: frozenset[str] | None,
        *,
        human: bool = False,
        authenticated: bool = True,
        read_along: ReadAhead | None = None,
    ) -> None:
        unknown = (roles or frozenset()) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown roles {sorted(unknown)}")
        self.roles = roles  # None: any authenticated caller
        self.human = human
        self.authenticated = authenticated
        self.read_along = read_along

    def describe(self) -> dict[str, Any]:
        if not self.authenticated:
            return {"authenticated": False, "roles": [], "human": False}
        return {
            "authenticated": True,
            "roles": sorted(self.roles) if self.roles else ["any"],
            "human": self.human,
        }

    def permits(self, caller: Caller) -> bool:
        if not self.authenticated:
            return True
        if self.roles is not None and not caller.holds_any(self.roles):
            return False
        return not (self.human and caller.actor != "human")

    def refusal(self, caller: Caller, operation_id: str) -> Forbidden | None:
        """Why `caller` may not call the operation (its roles, or not a person), or None.
        The MCP endpoint asks this too, before it looks at a tool's arguments."""
        if not self.authenticated:
            return None
        if self.roles is not None and not caller.holds_any(self.roles):
            return Forbidden(
                f"{operation_id} needs one of the roles {', '.join(sorted(self.roles))}.",
                ProblemCode.AUTH_FORBIDDEN,
                operation_id=operation_id,
                required=sorted(self.roles),
                held=sorted(caller.roles),
            )
        if self.human and caller.actor != "human":
            return Forbidden(
                f"{operation_id} may only be done by a person signed in with a session.",
                ProblemCode.AUTH_HUMAN_REQUIRED,
                operation_id=operation_id,
            )
        return None

    async def __call__(self, request: Request) -> Invocation:
        route = request.scope.get("route")
        operation_id = getattr(route, "operation_id", None) or "unknown"
        invocation = Invocation(
            caller=None, operation_id=operation_id, request_id=request_id(request)
        )
        refuse_foreign_origin(request)
        if self.authenticated:
            along = await self.read_along(request) if self.read_along is not None else None
            request.state.read_along = along
            caller = authenticate(request, along=along)
            invocation = Invocation(caller, operation_id, invocation.request_id)
            request.state.invocation = invocation
            refused = self.refusal(caller, operation_id)
            if refused is not None:
                raise refused
        request.state.invocation = invocation
        await require_declared_media_type(request)
        await refuse_unstorable_numbers(request)
        return invocation


def authenticate(request: Request, *, along: ReadAlong | None = None) -> Caller:
    """The caller of `request`; `along`: items the operation reads next, read in the same round
    trip as the caller's token (not when the MCP endpoint authenticated the caller already)."""
    # Loaded here, not at the ai, audit, counters and 10 more functions' cold start.
    from etikett.domain.users.tokens import authenticate as resolve

    via_mcp = bool(request.scope.get(VIA_MCP_SCOPE_KEY))
    if via_mcp:
        known = request.scope.get(MCP_CALLER_SCOPE_KEY)
        if isinstance(known, Caller):
            return known.as_service()
    header = request.headers.get("authorization")
    token: str | None = None
    if header:
        scheme, _, value = header.partition(" ")
        if scheme.lower() != "bearer" or not value.strip():
            raise Unauthenticated(
                "Use `Authorization: Bearer <token>`.", ProblemCode.AUTH_INVALID_TOKEN
            )
        token = value.strip()
    elif not via_mcp:
        token = request.cookies.get(SESSION_COOKIE)
        if token:
            require_csrf_header(request)
    if not token:
        raise Unauthenticated("A bearer token is required.", ProblemCode.AUTH_UNAUTHENTICATED)
    caller = resolve(token, along=along)
    return caller.as_service() if via_mcp else caller


def require_csrf_header(request: Request) -> None:
    """A change authenticated by the session cookie must say it comes from the console."""
    if request.method in SAFE_METHODS or request.headers.get(CSRF_HEADER):
        return
    raise Forbidden(
        f"A change signed in by the session cookie needs the header `{CSRF_HEADER}: 1`, as the "
        "console sends it; other clients use `Authorization: Bearer`.",
        ProblemCode.AUTH_CSRF_REQUIRED,
        header=CSRF_HEADER,
    )


def refuse_foreign_origin(request: Request) -> None:
    """A change without an `Authorization` header (signed in by cookie, or signing in) that a
    browser sent from a page of another origin. Browsers send `Origin` with every such request
    and `Sec-Fetch-Site`; other clients send neither, so for them nothing changes."""
    if request.method in SAFE_METHODS or request.headers.get("authorization"):
        return
    origin = request.headers.get("origin")
    if origin is not None and _origin_key(origin) != _own_origin(request):
        raise Forbidden(
            f"The request came from a page of {origin}, not of this service.",
            ProblemCode.AUTH_ORIGIN_REFUSED,
            origin=origin,
        )
    site = (request.headers.get("sec-fetch-site") or "").lower()
    if site in ("cross-site", "same-site"):
        raise Forbidden(
            f"The request came from a page of another origin (Sec-Fetch-Site: {site}).",
            ProblemCode.AUTH_ORIGIN_REFUSED,
            sec_fetch_site=site,
        )


def _own_origin(request: Request) -> str | None:
    """This service's origin as the client addressed it (API Gateway and the local gateway
    pass the scheme as X-Forwarded-Proto and keep the Host header)."""
    scheme = (request.headers.get("x-forwarded-proto") or request.url.scheme).split(",")[0]
    host = request.headers.get("host") or request.url.netloc
    return _origin_key(f"{scheme.strip()}://{host.strip()}")


def _origin_key(origin: str) -> str | None:
    try:
        parts = urlsplit(origin.strip().lower())
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname or port is None:
        return None  # "null" (sandboxed or opaque origins) is never ours
    return f"{parts.scheme}://{parts.hostname}:{port}"


def accepted_media_types(route: Any) -> tuple[str, ...]:
    """What an operation takes as a body: form data where it declares an upload, else JSON."""
    body_field = getattr(route, "body_field", None)
    if body_field is not None and isinstance(body_field.field_info, params.Form):
        return FORM_MEDIA_TYPES
    return (JSON_MEDIA_TYPE,)


async def require_declared_media_type(request: Request) -> None:
    """A body is parsed only as the type its operation declares, never guessed."""
    if request.method in SAFE_METHODS:
        return
    accepted = accepted_media_types(request.scope.get("route"))
    header = request.headers.get("content-type")
    media_type = _media_type(request)
    if accepted == FORM_MEDIA_TYPES:
        # The upload's form parser owns the stream; a form body always names its type.
        present = header is not None or int(request.headers.get("content-length") or 0) > 0
    else:
        present = bool(await request.body())
    if not present or media_type in accepted or (JSON_MEDIA_TYPE in accepted and _json(media_type)):
        return
    raise UnsupportedMediaType(
        f"The body is {header or 'of no declared type'}; this operation takes "
        f"{' or '.join(accepted)}.",
        content_type=header,
        accepted=list(accepted),
    )


async def refuse_unstorable_numbers(request: Request) -> None:
    """Every number of a JSON body fits DynamoDB, or the request is refused naming the field
    (422), before anything reads it: one check for all that any operation stores."""
    if request.method in SAFE_METHODS:
        return
    if accepted_media_types(request.scope.get("route")) != (JSON_MEDIA_TYPE,):
        return
    refuse_unstorable(await json_body(request), "body")


async def json_body(request: Request) -> Any:
    """The body as FastAPI parsed it for the operation (Starlette keeps the result), or None: no
    body, one not declared as JSON (FastAPI left it alone), or one that is not JSON (the
    operation answers for it). Never fails, so it may be read before the caller is known."""
    if not _json(_media_type(request)) or not await request.body():
        return None
    try:
        return await request.json()
    except (ValueError, RecursionError):
        return None


def _media_type(request: Request) -> str:
    return (request.headers.get("content-type") or "").split(";")[0].strip().lower()


def _json(media_type: str) -> bool:
    """JSON, or a structured syntax on it (`application/problem+json`, …)."""
    return media_type == JSON_MEDIA_TYPE or (
        media_type.startswith("application/") and media_type.endswith("+json")
    )


def client_address(request: Request) -> str | None:
    """The address the request came from, as API Gateway saw the connection (the local gateway
    passes its peer the same way). Never a header the client wrote, such as X-Forwarded-For."""
    event = request.scope.get("aws.event")
    if isinstance(event, dict):
        source = ((event.get("requestContext") or {}).get("http") or {}).get("sourceIp")
        if source:
            return str(source)
    return request.client.host if request.client else None


def request_id(request: Request) -> str:
    event = request.scope.get("aws.event")
    if isinstance(event, dict):
        context = event.get("requestContext") or {}
        if context.get("requestId"):
            return str(context["requestId"])
    return request.headers.get("x-request-id") or uuid.uuid4().hex


def requires(*roles: str, human: bool = False, read_along: ReadAhead | None = None) -> Any:
    """Dependency for an operation open to `roles` (admin always included). `read_along`: the
    items the operation will read, named from its request, to be read with the caller's token
    (the operation finds them in `request.state.read_along`)."""
    return Depends(Access(frozenset(roles), human=human, read_along=read_along))


def any_caller(*, human: bool = False) -> Any:
    """Dependency for an operation open to every authenticated caller."""
    return Depends(Access(None, human=human))


def public() -> Any:
    """Dependency for an operation that needs no authentication."""
    return Depends(Access(None, authenticated=False))


class RunnerCertificateAccess(Access):
    """The agent channel: the caller is a Runner, identified by its client certificate as API
    Gateway's mutual TLS (or the local gateway's HTTPS port) passes it. User tokens never count."""

    def __init__(self, job_parameter: str | None = None, checked_in_write: bool = False) -> None:
        """`job_parameter`: the path parameter naming the job the request is about, read with
        the Runner (`request.state.job`: the job, or None when there is none).
        `checked_in_write`: every write of the operation checks the Runner itself (admission)."""
        super().__init__(frozenset(), authenticated=True)
        self.job_parameter = job_parameter
        self.checked_in_write = checked_in_write

    def describe(self) -> dict[str, Any]:
        return {
            "authenticated": True,
            "roles": [],
            "human": False,
            "via": "runner client certificate (mutual TLS)",
        }

    def permits(self, caller: Caller) -> bool:
        return False  # no user or agent token ever reaches these operations

    async def __call__(self, request: Request) -> Invocation:
        # Loaded here, not at the ai, audit, auth and 11 more functions' cold start.
        from etikett.domain.agent.admission import identify, identify_for_job

        await require_declared_media_type(request)
        route = request.scope.get("route")
        operation_id = getattr(route, "operation_id", None) or "unknown"
        event = request.scope.get("aws.event") or {}
        certificate = (
            ((event.get("requestContext") or {}).get("authentication") or {}).get("clientCert")
            or {}
        ).get("clientCertPem")
        if not certificate:
            raise Unauthenticated(
                "The agent channel needs the Runner's client certificate "
                "(mutual TLS); tokens are not accepted here.",
                ProblemCode.RUNNER_CERTIFICATE_REQUIRED,
            )
        if self.job_parameter is not None:
            runner, request.state.job = identify_for_job(
                certificate, str(request.path_params.get(self.job_parameter, ""))
            )
        else:
            runner = identify(certificate, checked_in_write=self.checked_in_write)
        request.state.runner = runner
        request.state.certificate_pem = certificate  # verified: the Runner's current one
        caller = Caller(actor="service", subject=f"runner:{runner.id}", roles=frozenset())
        invocation = Invocation(caller, operation_id, request_id(request))
        request.state.invocation = invocation
        await refuse_unstorable_numbers(request)
        return invocation


class EnrollmentTokenAccess(Access):
    """Runner bootstrap: no user; the one-time enrollment token is checked by the domain."""

    def __init__(self) -> None:
        super().__init__(None, authenticated=False)

    def describe(self) -> dict[str, Any]:
        return {
            "authenticated": False,
            "roles": [],
            "human": False,
            "via": "enrollment token (Authorization: Bearer etkr_…)",
        }


class EnrollmentReadAccess(Access):
    """Admins and operators, or the enrolling Runner with its enrollment secret."""

    SECRET_HEADER = "x-enrollment-secret"

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "alternatively": "X-Enrollment-Secret header"}

    async def __call__(self, request: Request) -> Invocation:
        if request.headers.get(self.SECRET_HEADER):
            route = request.scope.get("route")
            invocation = Invocation(
                None, getattr(route, "operation_id", None) or "unknown", request_id(request)
            )
            request.state.invocation = invocation
            return invocation
        return await super().__call__(request)


def runner_certificate(job_parameter: str | None = None, checked_in_write: bool = False) -> Any:
    return Depends(RunnerCertificateAccess(job_parameter, checked_in_write))


def enrollment_token() -> Any:
    return Depends(EnrollmentTokenAccess())


def enrollment_reader() -> Any:
    return Depends(EnrollmentReadAccess(frozenset({"admin", "operator"})))
