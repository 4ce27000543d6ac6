"""Executes a flow document on records. Compiled once per document version (every CEL expression
parsed once); each record travels the wires on its own, and a record that fails in a node fails
alone: the others go on and the run is `partial`. What each node does is in steps.py.

Whatever document it is given, the engine stops: each record has a budget of node executions
(`MAX_NODE_EXECUTIONS`) and of copies that fan-out makes of it (`MAX_FAN_OUT`). A record that
would exceed either fails with a message saying so (lint reports the causes before: `flow.cycle`,
an error that also stops dry runs and deployments, and `flow.fan_out`, a warning).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from etikett_engine.cel import to_cel
from etikett_engine.dsl.flow import (
    MAX_FAN_OUT,
    MAX_NODE_EXECUTIONS,
    FlowDocument,
    FlowNode,
    malformations,
    targets,
)
from etikett_engine.flows.effects import Effects
from etikett_engine.flows.steps import NodeError, Step, StepContext, check_size, step_for

MAX_RECORD_BYTES = 64_000
RunOutcome = Literal["succeeded", "failed", "partial"]


class BudgetExhausted(NodeError):
    """The record used up its budget of node executions or fan-out copies."""


@dataclass
class RunEnv:
    """What every expression of a run sees besides the record."""

    context: Mapping[str, Any] = field(default_factory=dict)
    runner: Mapping[str, Any] | None = None
    run_id: str = "dry"


@dataclass
class RecordResult:
    trace: list[dict[str, Any]]
    side_effects: list[dict[str, Any]]
    errors: list[dict[str, Any]]
    exhausted: bool = False  # stopped by the record's budget: its wires loop or fan out too much

    @property
    def failed(self) -> bool:
        return bool(self.errors)


@dataclass
class RunResult:
    outcome: RunOutcome
    records: int
    failed_records: int
    traces: list[list[dict[str, Any]]]  # the first `trace_limit` records' traces
    side_effects: list[dict[str, Any]]
    errors: list[dict[str, Any]]


class FlowProgram:
    """A flow document made runnable."""

    def __init__(self, document: FlowDocument) -> None:
        self.document = document
        self.nodes: dict[str, FlowNode] = {node.id: node for node in document.nodes}
        self._steps: dict[str, Step] = {node.id: step_for(node) for node in document.nodes}
        self._reach: dict[str, frozenset[str]] = {}

    @classmethod
    def compile(cls, document: FlowDocument | Mapping[str, Any]) -> FlowProgram:
        if not isinstance(document, FlowDocument):
            document = FlowDocument.model_validate(document)
        problems = malformations(document)
        if problems:
            raise ValueError(f"the flow is malformed at {problems[0][0]}: {problems[0][1]}")
        return cls(document)

    def triggers(self) -> list[FlowNode]:
        return [n for n in self.document.nodes if n.type.startswith("trigger.")]

    def reachable(self, trigger_id: str) -> frozenset[str]:
        """The nodes a record from this trigger may pass (in document order for traces)."""
        if trigger_id not in self._reach:
            seen = {trigger_id}
            stack = [trigger_id]
            while stack:
                for target in targets(self.nodes[stack.pop()]):
                    if target not in seen:
                        seen.add(target)
                        stack.append(target)
            self._reach[trigger_id] = frozenset(seen)
        return self._reach[trigger_id]

    def env_values(self, env: RunEnv) -> dict[str, Any]:

        return {"context": to_cel(dict(env.context)), "runner": to_cel(dict(env.runner or {}))}

    def run_record(
        self,
        record: dict[str, Any],
        trigger_id: str,
        effects: Effects,
        *,
        env: RunEnv | None = None,
        record_index: int = 0,
        env_values: dict[str, Any] | None = None,
        trace: bool = True,
    ) -> RecordResult:
        """One record from `trigger_id` through every node it reaches."""
        env = env or RunEnv()
        if trigger_id not in self.nodes:
            raise KeyError(trigger_id)
        context = StepContext(
            env_values if env_values is not None else self.env_values(env),
            effects,
            env.run_id,
            record_index,
            [],
        )
        entries: dict[str, dict[str, Any]] = {}
        errors: list[dict[str, Any]] = []
        try:
            check_size(record, "the record")
        except NodeError as error:
            errors.append({"node_id": trigger_id, "message": str(error)})
            return RecordResult([], [], errors)
        queue: deque[tuple[str, dict[str, Any]]] = deque([(trigger_id, record)])
        executions, copies, exhausted = 0, 1, False
        while queue:
            node_id, current = queue.popleft()
            node = self.nodes[node_id]
            entry: dict[str, Any] = {"node_id": node_id, "type": node.type, "input": current}
            try:
                if executions >= MAX_NODE_EXECUTIONS:
                    raise BudgetExhausted(
                        f"the record went through {MAX_NODE_EXECUTIONS} node executions, the "
                        "budget of one record, and was stopped: the wires loop (lint: flow.cycle) "
                        "or fan out too much (flow.fan_out)"
                    )
                executions += 1
                output, next_ids = self._steps[node_id](current, context)
                if output is not None and len(next_ids) > 1:
                    copies += len(next_ids) - 1
                    if copies > MAX_FAN_OUT:
                        raise BudgetExhausted(
                            f"fan-out would make {copies} copies of the record; at most "
                            f"{MAX_FAN_OUT}, the budget of one record (lint: flow.fan_out)"
                        )
            except NodeError as error:
                entry.update(status="error", output=None, message=str(error))
                errors.append({"node_id": node_id, "message": str(error)})
                if isinstance(error, BudgetExhausted):
                    exhausted = True
                    queue.clear()
            else:
                entry.update(status="executed", output=output)
                if output is not None:
                    queue.extend((target, output) for target in next_ids)
            if trace:
                if exhausted:
                    entries[node_id] = entry  # the trace shows where the budget ran out
                else:
                    entries.setdefault(node_id, entry)
        trace_list: list[dict[str, Any]] = []
        if trace:
            for node in self.document.nodes:
                if node.id in entries:
                    trace_list.append(entries[node.id])
                elif node.id in self.reachable(trigger_id):
                    trace_list.append(
                        {
                            "node_id": node.id,
                            "type": node.type,
                            "status": "skipped",
                            "input": None,
                            "output": None,
                        }
                    )
        return RecordResult(trace_list, context.side_effects, errors, exhausted)

    def run(
        self,
        records: Iterable[dict[str, Any]],
        trigger_id: str,
        effects: Effects,
        *,
        env: RunEnv | None = None,
        trace_limit: int = 20,
    ) -> RunResult:
        """Every record of one trigger event; traces kept for the first `trace_limit`."""
        env = env or RunEnv()
        values = self.env_values(env)
        count = failed = 0
        traces: list[list[dict[str, Any]]] = []
        side_effects: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        for index, record in enumerate(records):
            result = self.run_record(
                record,
                trigger_id,
                effects,
                env=env,
                record_index=index,
                env_values=values,
                trace=index < trace_limit,
            )
            count += 1
            if result.trace:
                traces.append(result.trace)
            side_effects += result.side_effects
            if result.failed:
                failed += 1
                errors += [{"record": index, **e} for e in result.errors]
        if failed == 0:
            outcome: RunOutcome = "succeeded"
        elif failed == count:
            outcome = "failed"
        else:
            outcome = "partial"
        return RunResult(outcome, count, failed, traces, side_effects, errors[:100])
