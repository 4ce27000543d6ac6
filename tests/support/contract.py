"""The operation contract (`shared/spec/operations.md`) read as data: each table row's method,
path, operationId, roles and MCP column, so tests check the service against the contract itself
rather than against a copy of it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from support.server import REPO

ROLES = ("designer", "operator", "approver", "admin")
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_PARENTHESES = re.compile(r"\([^)]*\)")


@dataclass(frozen=True)
class ContractOperation:
    method: str
    path: str
    operation_id: str
    roles_text: str  # the Roles cell as written
    public: bool  # no user credential at all ("none", "enrollment token")
    roles: frozenset[str] | None  # None: any authenticated caller
    human: bool  # always a person with a session ("admin, human", "any human")
    human_by_policy: bool  # a person only in some cases, while aiFreigabePflicht is on
    mcp: bool

    def permits_role(self, roles: frozenset[str]) -> bool:
        """Whether a caller holding `roles` passes the role rule (admin may do everything)."""
        if self.public or self.roles is None:
            return True
        return "admin" in roles or bool(self.roles & roles)


# The operation contract as the product's specification states it, kept in the repository so
# that a clean clone checks itself against it; `the_contract_is_the_specifications` (in
# tests/integration/security/test_role_matrix.py) fails when the copy drifts from the
# specification beside the checkout.
CONTRACT_COPY = REPO / "docs" / "contract" / "operations.md"


def specification_md() -> Path | None:
    """`shared/spec/operations.md` beside the checkout (or one of its parents), if there is one."""
    for parent in REPO.parents:
        candidate = parent / "shared" / "spec" / "operations.md"
        if candidate.is_file():
            return candidate
    return None


def operations_md() -> Path:
    """The contract the tests check against: the repository's copy."""
    return CONTRACT_COPY


def parse(text: str) -> list[ContractOperation]:
    """Every operation row of the contract's tables."""
    operations = []
    for line in text.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != 5 or cells[0] not in _METHODS:
            continue
        method, path, operation_cell, roles_cell, mcp_cell = cells
        operation_id = _PARENTHESES.sub("", operation_cell).split()[0]
        operations.append(
            ContractOperation(
                method=method,
                path=path,
                operation_id=operation_id,
                roles_text=roles_cell,
                mcp=mcp_cell.lower().startswith("yes"),
                **_roles(roles_cell),
            )
        )
    return operations


def _roles(cell: str) -> dict[str, object]:
    """The Roles cell: "approver, admin", "any", "any human", "admin, human", "none (…)",
    "enrollment token", "operator (human for … while the policy is on)",
    "approver, human while the policy is on", "admin, operator; or the enrolling Runner …"."""
    conditional = "human" in " ".join(_PARENTHESES.findall(cell))
    main = _PARENTHESES.sub("", cell).split(";")[0]
    words = [word.strip() for word in main.split(",") if word.strip()]
    if words[0].startswith("none") or words[0] == "enrollment token":
        return {"public": True, "roles": None, "human": False, "human_by_policy": False}
    roles: set[str] = set()
    anyone = human = False
    for word in words:
        if word == "any":
            anyone = True
        elif word == "any human":
            anyone = human = True
        elif word == "human":
            human = True
        elif word.startswith("human "):  # "human while the policy is on"
            conditional = True
        elif word in ROLES:
            roles.add(word)
        else:
            raise ValueError(f"unreadable roles cell {cell!r}: {word!r}")
    return {
        "public": False,
        "roles": None if anyone else frozenset(roles),
        "human": human,
        "human_by_policy": conditional,
    }


def contract() -> list[ContractOperation]:
    return parse(operations_md().read_text(encoding="utf-8"))
