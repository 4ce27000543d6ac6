"""Who is calling: a person with a session (human actor) or an agent with a token (service)."""

from __future__ import annotations

from typing import Literal, NamedTuple

ROLES: tuple[str, ...] = ("designer", "operator", "approver", "admin")
Role = Literal["designer", "operator", "approver", "admin"]
ActorKind = Literal["human", "service"]


class Caller(NamedTuple):
    actor: ActorKind
    subject: str
    roles: frozenset[str]
    user_id: str | None = None
    token_id: str | None = None
    # The hash of the presented session secret, so logout can end exactly this session.
    session_hash: str | None = None

    def holds_any(self, roles: frozenset[str]) -> bool:
        """`admin` may do everything; otherwise one of `roles` suffices."""
        return "admin" in self.roles or bool(self.roles & roles)

    def as_service(self) -> Caller:
        """Every request through /mcp is a service actor, even with a person's session token."""
        return self._replace(actor="service")


class Invocation(NamedTuple):
    """One operation being carried out: who, which operation, which request (for the audit log)."""

    caller: Caller | None
    operation_id: str
    request_id: str | None = None
