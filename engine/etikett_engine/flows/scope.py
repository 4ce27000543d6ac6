"""What a flow's expressions can see at each node: the fields a record may have as it enters the
node (what its trigger gives, plus what the nodes on some path to it add), the context
parameters and the Runner's fields. Lint names a field that no path provides
(`flow.cel_name_unknown`), and the editor shows each node's fields beside its expressions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from etikett_engine.dsl.flow import FlowDocument, FlowNode, targets
from etikett_engine.flows.findings import Finding, pointer

RUNNER_FIELDS = frozenset({"id", "name", "group_id"})
# What a node adds to the record it passes on (logic.set: the fields it sets).
_ADDS = {"action.print": frozenset({"print"}), "action.http": frozenset({"http"})}

Fields = frozenset[str] | None  # None: not known (a record may have any field)


@dataclass(frozen=True)
class Scope:
    """The names a caller knows of: the fields records have as they enter a folder or HTTP
    trigger (e.g. its sample records'), and the context parameters set where the flow runs.
    None: not known, so not checked."""

    record: Fields = None
    context: Fields = None


def added_fields(node: FlowNode) -> frozenset[str]:
    if node.type == "logic.set":
        values = node.fields().get("values")
        return frozenset(str(k) for k in values) if isinstance(values, dict) else frozenset()
    return _ADDS.get(node.type, frozenset())


def _merge(a: Fields, b: Fields) -> Fields:
    return None if a is None or b is None else a | b


def record_fields(document: FlowDocument, entering: Fields) -> dict[str, Fields]:
    """Node id → the fields a record may have as it enters the node, over every path from a
    trigger (a schedule's records are empty; other triggers' have `entering`). Nodes no trigger
    reaches are absent."""
    by_id = {node.id: node for node in document.nodes}
    seen: dict[str, Fields] = {}
    queue: deque[str] = deque()
    for node in document.nodes:
        if node.type.startswith("trigger."):
            seen[node.id] = frozenset() if node.type == "trigger.schedule" else entering
            queue.append(node.id)
    # Sets only grow (and None is the top): each node is queued again at most once per field
    # it gains, so this ends on any graph, cycles included.
    while queue:
        node = by_id[queue.popleft()]
        fields = seen[node.id]
        leaving = None if fields is None else fields | added_fields(node)
        for target in targets(node):
            if target not in by_id:
                continue
            before = seen.get(target, frozenset())
            after = leaving if target not in seen else _merge(before, leaving)
            if target not in seen or after != before:
                seen[target] = after
                queue.append(target)
    return seen


def name_findings(
    here: str,
    node: FlowNode,
    sources: Iterable[tuple[tuple[Any, ...], str]],
    record: Fields,
    context: Fields,
) -> list[Finding]:
    """A warning for each field an expression of the node reads that no record reaching it
    has (`record`), no context parameter is (`context`), or the Runner lacks; unknown sets
    are not checked, and a field the expression tests for itself (`has(…)`) is fine."""
    # Loaded here, not at the flows and mcp functions' cold start.
    from etikett_engine.cel import CelInvalid
    from etikett_engine.cel.fields import field_reads

    known: dict[str, Fields] = {"record": record, "context": context, "runner": RUNNER_FIELDS}
    found: list[Finding] = []
    for path, source in sources:
        try:
            reads = field_reads(source, known)
        except CelInvalid:
            continue  # lint reports the expression itself (flow.cel_invalid)
        for read in reads:
            fields = known[read.root]
            if read.guarded or fields is None or read.field in fields:
                continue
            found.append(
                Finding(
                    code="flow.cel_name_unknown",
                    severity="warning",
                    path=here + pointer(*path),
                    node_id=node.id,
                    message=f"{read.root}.{read.field}: {_why(read.root, read.field, fields)}",
                    params={
                        "expression": source[:200],
                        "name": f"{read.root}.{read.field}",
                        "root": read.root,
                        "field": read.field,
                        "known": sorted(fields)[:100],
                        "line": read.line,
                        "column": read.column,
                    },
                )
            )
    return found


def _why(root: str, field: str, fields: frozenset[str]) -> str:
    listed = ", ".join(sorted(fields)[:20]) or "none"
    if root == "record":
        return f"no record that reaches this node has the field {field!r} (it may have: {listed})"
    if root == "context":
        return f"no context parameter {field!r} is set where the flow runs (set: {listed})"
    return f"a Runner has no field {field!r} (it has: {listed})"
