"""Who calls in the domain tests: people with roles, agents with tokens, and reading back what
the audit log recorded about a target."""

from __future__ import annotations

from etikett.domain.actors import Caller, Invocation
from etikett.domain.audit import audit_entries
from etikett.domain.audit.audit_entries import AuditEntry
from etikett.ids import new_id


def human(operation: str, *roles: str, subject: str | None = None) -> Invocation:
    """A person signed in with a session (default role: admin)."""
    caller = Caller(
        actor="human",
        subject=subject or f"person-{new_id('x')[-6:].lower()}",
        roles=frozenset(roles or ("admin",)),
        user_id=new_id("usr"),
    )
    return Invocation(caller, operation, request_id=new_id("req"))


def agent(operation: str, *roles: str, subject: str | None = None) -> Invocation:
    """An agent with a service-account token (default roles: every role but admin)."""
    caller = Caller(
        actor="service",
        subject=subject or f"agent-{new_id('x')[-6:].lower()}",
        roles=frozenset(roles or ("designer", "operator", "approver")),
        token_id=new_id("tok"),
    )
    return Invocation(caller, operation, request_id=new_id("req"))


def trail(target_id: str) -> list[AuditEntry]:
    """The audit entries about `target_id`, oldest first."""
    entries = audit_entries.list_entries(target=target_id, limit=200, cursor=None).items
    return list(reversed(entries))


def operations(target_id: str) -> list[str]:
    return [entry.operation_id for entry in trail(target_id)]
