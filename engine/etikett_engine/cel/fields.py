"""Which fields of map-valued names an expression reads (`record.qty`, `context["hall"]`), so
that a flow's lint can name a field no record or context will have before a run fails on it.

Read from the parsed tree, never by running anything. A field the expression tests for itself
(`has(record.qty)`, `"qty" in record`) is guarded: the expression copes with its absence.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from typing import Any, NamedTuple, cast

from etikett_engine.cel.programs import program

# Macros bind their first argument(s) as a local name, which shadows a root of the same name.
_MACROS = {"map": 1, "filter": 1, "all": 1, "exists": 1, "exists_one": 1, "reduce": 2}


class FieldRead(NamedTuple):
    root: str  # the name read from, e.g. "record"
    field: str
    line: int | None
    column: int | None
    guarded: bool  # the expression tests for the field itself


def field_reads(source: str, roots: Iterable[str]) -> list[FieldRead]:
    """Every field of `roots` the expression selects (`root.field`, `root["field"]`), in source
    order. CelInvalid when the expression does not compile (lint reports that on its own)."""
    from lark import Tree  # with the first compile, as celpy (see library.py)

    wanted = frozenset(roots)
    tree = program(source).tree
    found: list[FieldRead] = []
    guards: set[tuple[str, str]] = set()
    stack: list[tuple[Any, frozenset[str], bool]] = [(tree, frozenset(), False)]
    while stack:  # explicit: CEL trees nest every precedence level, recursion would be deep
        node, bound, guarded = stack.pop()
        if not isinstance(node, Tree):
            continue
        kind, children = node.data, cast(list[Any], node.children)
        if kind in ("member_dot", "member_index"):
            root = _root_name(children[0])
            field = _field_of(kind, children[1])
            if root is not None and root.value in wanted and root.value not in bound and field:
                token = children[1] if kind == "member_dot" else root
                found.append(FieldRead(root.value, field, token.line, token.column, guarded))
                if guarded:
                    guards.add((root.value, field))
                continue
        elif kind == "ident_arg" and children[0].value == "has":
            stack.extend((child, bound, True) for child in children[1:])
            continue
        elif kind == "relation" and len(children) == 2 and _is(children[0], "relation_in"):
            # `"qty" in record`: the operator's tree holds the left side, its parent the right
            key, container = _string_literal(children[0].children[0]), _root_name(children[1])
            if key is not None and container is not None and container.value not in bound:
                guards.add((container.value, key))
        elif kind == "member_dot_arg":
            binds = _MACROS.get(children[1].value, 0)
            args = children[2].children if len(children) > 2 else []
            stack.append((children[0], bound, guarded))
            if binds and len(args) > binds:
                local = bound | {n.value for a in args[:binds] if (n := _root_name(a)) is not None}
                stack.extend((arg, frozenset(local), guarded) for arg in args[binds:])
            else:
                stack.extend((arg, bound, guarded) for arg in args)
            continue
        stack.extend((child, bound, guarded) for child in reversed(children))
    reads = [r._replace(guarded=r.guarded or (r.root, r.field) in guards) for r in found]
    return sorted(reads, key=lambda r: (r.line or 0, r.column or 0))


def _is(node: Any, kind: str) -> bool:
    return getattr(node, "data", None) == kind


def _single(node: Any) -> Any:
    """The node under the chain of one-child precedence levels (expr → … → primary)."""
    while getattr(node, "data", None) is not None and len(node.children) == 1:
        child = node.children[0]
        if getattr(child, "data", None) is None:
            return node
        node = child
    return node


def _root_name(node: Any) -> Any:
    """The IDENT token when `node` is just a name (`record`), else None."""
    inner = _single(node)
    if getattr(inner, "data", None) == "ident":
        return inner.children[0]
    return None


def _string_literal(node: Any) -> str | None:
    inner = _single(node)
    if getattr(inner, "data", None) != "literal":
        return None
    text = str(inner.children[0].value)
    if not text or text[0] not in "\"'" or text.startswith(("'''", '"""')):
        return None  # raw, bytes and triple-quoted strings: not worth guessing a field name
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return None
    return value if isinstance(value, str) else None


def _field_of(kind: str, node: Any) -> str | None:
    if kind == "member_dot":
        return str(node.value)
    return _string_literal(node)
