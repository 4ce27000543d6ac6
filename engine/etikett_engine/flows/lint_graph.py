"""The flow's graph, as lint sees it: wires that close a cycle, fan-out that multiplies one record
past the engine's bounds, and nodes no trigger reaches."""

from collections.abc import Iterator

from etikett_engine.dsl.flow import (
    MAX_FAN_OUT,
    MAX_NODE_EXECUTIONS,
    FlowNode,
    alternatives,
    targets,
)
from etikett_engine.flows.findings import Finding, pointer


def cycles(nodes: list[FlowNode]) -> list[Finding]:
    """Every wire that closes a cycle (iterative DFS: a flow has at most a few hundred nodes)."""
    index = {node.id: i for i, node in enumerate(nodes)}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    found: list[Finding] = []
    for start in nodes:
        if start.id in state:
            continue
        stack: list[tuple[str, Iterator[str]]] = [(start.id, iter(targets(start)))]
        state[start.id] = 1
        while stack:
            node_id, rest = stack[-1]
            target = next(rest, None)
            if target is None:
                state[node_id] = 2
                stack.pop()
            elif state.get(target) == 1:
                path = [n for n, _ in stack]
                loop = [*path[path.index(target) :], target]
                found.append(
                    Finding(
                        code="flow.cycle",
                        severity="error",
                        path=pointer("nodes", index[node_id], "wires"),
                        node_id=node_id,
                        message="The wires form a cycle: " + " → ".join(loop) + ".",
                        params={"cycle": loop},
                    )
                )
            elif target not in state:
                state[target] = 1
                stack.append((target, iter(targets(nodes[index[target]]))))
    return found


_CAP = 10**12  # worst cases grow exponentially; past this they are all "far too many"


def fan_out(nodes: list[FlowNode], triggers: list[FlowNode]) -> list[Finding]:
    """Triggers whose records may exceed the engine's budget of one record: the copies fan-out
    makes of it, or its node executions, counted for the worst case (every filter passes; a
    switch takes its widest case). Only for graphs without cycles."""
    by_id = {node.id: node for node in nodes}
    index = {node.id: i for i, node in enumerate(nodes)}
    worst: dict[str, tuple[int, int]] = {}  # node id -> (copies, executions) from there on

    def measure(start: str) -> tuple[int, int]:
        stack = [start]
        while stack:  # post-order without recursion: a chain may be 200 nodes long
            node_id = stack[-1]
            pending = [t for group in alternatives(by_id[node_id]) for t in group if t not in worst]
            if pending:
                stack += pending
                continue
            stack.pop()
            copies, executions = 1, 1
            for group in alternatives(by_id[node_id]):
                if group:
                    copies = max(copies, sum(worst[t][0] for t in group))
                    executions = max(executions, 1 + sum(worst[t][1] for t in group))
            worst[node_id] = (min(copies, _CAP), min(executions, _CAP))
        return worst[start]

    found = []
    for trigger in triggers:
        copies, executions = measure(trigger.id)
        if copies > MAX_FAN_OUT or executions > MAX_NODE_EXECUTIONS:
            found.append(
                Finding(
                    code="flow.fan_out",
                    severity="warning",
                    path=pointer("nodes", index[trigger.id], "wires"),
                    node_id=trigger.id,
                    message=f"A record from {trigger.id!r} may be copied to {copies} branches "
                    f"and pass {executions} node executions; the engine fails a record beyond "
                    f"{MAX_FAN_OUT} copies or {MAX_NODE_EXECUTIONS} executions. Wire fewer "
                    "nodes to several others, or use a logic.switch.",
                    params={
                        "copies": copies,
                        "executions": executions,
                        "limit": MAX_FAN_OUT,
                        "execution_limit": MAX_NODE_EXECUTIONS,
                    },
                )
            )
    return found


def unreachable(nodes: list[FlowNode], triggers: list[FlowNode]) -> list[Finding]:
    by_id = {node.id: node for node in nodes}
    seen = {t.id for t in triggers}
    stack = [t.id for t in triggers]
    while stack:
        for target in targets(by_id[stack.pop()]):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return [
        Finding(
            code="flow.unreachable_node",
            severity="warning",
            path=pointer("nodes", i),
            node_id=node.id,
            message=f"No trigger's wires reach {node.id!r}; it never runs.",
            params={},
        )
        for i, node in enumerate(nodes)
        if node.id not in seen and triggers
    ]
