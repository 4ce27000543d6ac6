"""Who may call an operation: one dependency per route declares it, and everything reads that.

`requires("designer")` both guards the route at request time and publishes the rule in the OpenAPI
document (`x-etikett-access`), from which the MCP catalog filters tools by role; so REST and MCP
cannot disagree.
"""

from __future__ import annotations

import uuid
from typing import Any

from fastapi import Depends, Request

from etikett.domain.actors import ROLES, Caller, Invocation
from etikett.errors import Forbidden, ProblemCode, Unauthenticated

SESSION_COOKIE = "etikett_session"
# Set by the MCP endpoint on its in-process requests: cookies ignored, caller is a service actor.
VIA_MCP_SCOPE_KEY = "etikett.via_mcp"


class Access:
    """The access rule of one operation, callable as its FastAPI dependency."""

    def __init__(
        self, roles: frozenset[str] | None, *, human: bool = False, authenticated: bool = True
    ) -> None:
        unknown = (roles or frozenset()) - set(ROLES)
        if unknown:
            raise ValueError(f"unknown roles {sorted(unknown)}")
        self.roles = roles  # None: any authenticated caller
        self.human = human
        self.authenticated = authenticated

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

    async def __call__(self, request: Request) -> Invocation:
        route = request.scope.get("route")
        operation_id = getattr(route, "operation_id", None) or "unknown"
        invocation = Invocation(
            caller=None, operation_id=operation_id, request_id=request_id(request)
        )
        if self.authenticated:
            caller = authenticate(request)
            invocation = Invocation(caller, operation_id, invocation.request_id)
            request.state.invocation = invocation
            if self.roles is not None and not caller.holds_any(self.roles):
                raise Forbidden(
                    f"{operation_id} needs one of the roles {', '.join(sorted(self.roles))}.",
                    ProblemCode.AUTH_FORBIDDEN,
                    operation_id=operation_id,
                    required=sorted(self.roles),
                    held=sorted(caller.roles),
                )
            if self.human and caller.actor != "human":
                raise Forbidden(
                    f"{operation_id} may only be done by a person signed in with a session.",
                    ProblemCode.AUTH_HUMAN_REQUIRED,
                    operation_id=operation_id,
                )
        request.state.invocation = invocation
        return invocation


def authenticate(request: Request) -> Caller:
    from etikett.domain.tokens import authenticate as resolve

    via_mcp = bool(request.scope.get(VIA_MCP_SCOPE_KEY))
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
    if not token:
        raise Unauthenticated("A bearer token is required.", ProblemCode.AUTH_UNAUTHENTICATED)
    caller = resolve(token)
    return caller.as_service() if via_mcp else caller


def request_id(request: Request) -> str:
    event = request.scope.get("aws.event")
    if isinstance(event, dict):
        context = event.get("requestContext") or {}
        if context.get("requestId"):
            return str(context["requestId"])
    return request.headers.get("x-request-id") or uuid.uuid4().hex


def requires(*roles: str, human: bool = False) -> Any:
    """Dependency for an operation open to `roles` (admin always included)."""
    return Depends(Access(frozenset(roles), human=human))


def any_caller(*, human: bool = False) -> Any:
    """Dependency for an operation open to every authenticated caller."""
    return Depends(Access(None, human=human))


def public() -> Any:
    """Dependency for an operation that needs no authentication."""
    return Depends(Access(None, authenticated=False))


class RunnerCertificateAccess(Access):
    """The agent channel: the caller is a Runner, identified by its client certificate as API
    Gateway's mutual TLS (or the local gateway's HTTPS port) passes it. User tokens never count."""

    def __init__(self) -> None:
        super().__init__(frozenset(), authenticated=True)

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
        from etikett.domain.runner_agent import identify

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
        runner = identify(certificate)
        request.state.runner = runner
        caller = Caller(actor="service", subject=f"runner:{runner.id}", roles=frozenset())
        invocation = Invocation(caller, operation_id, request_id(request))
        request.state.invocation = invocation
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


def runner_certificate() -> Any:
    return Depends(RunnerCertificateAccess())


def enrollment_token() -> Any:
    return Depends(EnrollmentTokenAccess())


def enrollment_reader() -> Any:
    return Depends(EnrollmentReadAccess(frozenset({"admin", "operator"})))
