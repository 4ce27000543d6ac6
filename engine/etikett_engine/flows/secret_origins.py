"""Where a flow sends the secrets its `action.http` nodes name: a `secret` credential may name
the origins it may be sent to, and a node that sends it elsewhere is a lint error
(`flow.credential_origin_refused`); a secret that names none goes wherever a flow sends it, as
before origins existed, and lint warns (`flow.credential_unbound`).

The same comparison decides what the service delivers to a Runner (`sending_refused`): no
Runner gets a secret for a flow that would send it elsewhere."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol

from etikett_engine.dsl.flow import FlowDocument
from etikett_engine.dsl.origins import origin
from etikett_engine.flows.findings import Finding, pointer


@dataclass(frozen=True)
class SecretFacts:
    """What lint needs to know of a `secret` credential."""

    ref: str
    origins: tuple[str, ...] | None  # None: it names none


class SecretCatalog(Protocol):
    def secret(self, ref: str) -> SecretFacts | None:
        """None when there is no such secret (none, or a language model): the Runner fails the
        flow with the reason, lint says nothing."""


def sends(document: FlowDocument) -> Iterator[tuple[int, str, str, str]]:
    """(node index, node id, credential ref, URL) of each action.http that sends a secret."""
    for index, node in enumerate(document.nodes):
        if node.type != "action.http":
            continue
        fields = node.fields()
        ref, url = fields.get("credential"), fields.get("url")
        if isinstance(ref, str) and isinstance(url, str):
            yield index, node.id, ref, url


def sending_refused(url: str, origins: tuple[str, ...] | None) -> str | None:
    """Why a secret with `origins` may not be sent to `url` (None: it may)."""
    if origins is None:
        return None
    target = origin(url)
    if target is not None and target in origins:
        return None
    return f"it may be sent only to {', '.join(origins)}, not to {target or url[:200]}"


def findings(document: FlowDocument, secrets: SecretCatalog) -> list[Finding]:
    found: list[Finding] = []
    warned: set[str] = set()
    for index, node_id, ref, url in sends(document):
        facts = secrets.secret(ref)
        if facts is None:
            continue
        here = pointer("nodes", index)
        if facts.origins is None:
            if ref not in warned:
                warned.add(ref)
                found.append(
                    Finding(
                        code="flow.credential_unbound",
                        severity="warning",
                        path=here + "/credential",
                        node_id=node_id,
                        message=f"The secret {ref!r} names no origins, so it goes wherever a "
                        "flow sends it; an admin re-creates it with `origins` (e.g. "
                        f"[{origin(url) or 'https://…'!r}]) to bind it there.",
                        params={"credential": ref, "origin": origin(url)},
                    )
                )
            continue
        why = sending_refused(url, facts.origins)
        if why is not None:
            found.append(
                Finding(
                    code="flow.credential_origin_refused",
                    severity="error",
                    path=here + "/url",
                    node_id=node_id,
                    message=f"The secret {ref!r} is not sent to this URL: {why}.",
                    params={
                        "credential": ref,
                        "origin": origin(url),
                        "allowed": list(facts.origins),
                    },
                )
            )
    return found
