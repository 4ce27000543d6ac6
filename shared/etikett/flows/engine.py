"""Executes a flow document on records. Compiled once per document version (every CEL expression
parsed once); each record travels the wires on its own, and a record that fails in a node fails
alone: the others go on and the run is `partial`.

Whatever document it is given, the engine stops: each record has a budget of node executions
(`MAX_NODE_EXECUTIONS`) and of copies that fan-out makes of it (`MAX_FAN_OUT`). A record that
would exceed either fails with a message saying so (lint reports the causes before: `flow.cycle`,
an error that also stops dry runs and deployments, and `flow.fan_out`, a warning)."""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import ValidationError

from etikett.dsl.flow import (
    MAX_FAN_OUT,
    MAX_NODE_EXECUTIONS,
    NODE_SPECS,
    FlowDocument,
    FlowNode,
    malformations,
    targets,
)
from etikett.flows.effects import (
    EffectFailed,
    Effects,
    FileIntent,
    HttpIntent,
    LogIntent,
    Outcome,
    PrintIntent,
)
from etikett.flows.lint import check_expression

MAX_RECORD_BYTES = 64_000
MAX_VALUE_BYTES = 64_000
MAX_COPIES = 1000
RunOutcome = Literal["succeeded", "failed", "partial"]


class NodeError(Exception):
    """This record cannot go through this node; the message says why, in the flow's words."""


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


class _Compiled:
    """A CEL expression compiled once; `problem` when it cannot run (lint says so too)."""

    __slots__ = ("expression", "problem", "source")

    def __init__(self, source: Any) -> None:
        from etikett.cel import Expression

        self.source = source
        self.expression = None
        self.problem = check_expression(source) if isinstance(source, str) else "not a string"
        if self.problem is None:
            self.expression = Expression(source)

    def value(self, bound: Mapping[str, Any]) -> Any:
        from etikett.cel import CelInvalid

        if self.expression is None:
            raise NodeError(f"CEL {self.source!r}: {self.problem}")
        try:
            result = self.expression.run(bound)
        except CelInvalid as error:
            raise NodeError(f"CEL {self.source!r}: {error.params.get('message')}") from None
        _check_size(result, "the expression's value")
        return result


Step = Callable[[dict[str, Any], "_Context"], tuple[dict[str, Any] | None, list[str]]]


@dataclass
class _Context:
    env_values: dict[str, Any]
    effects: Effects
    run_id: str
    record_index: int
    side_effects: list[dict[str, Any]]
    # Records already converted to CEL, by identity: a record is converted once, and a set
    # node converts only the fields it sets (records are never changed in place).
    converted: dict[int, tuple[dict[str, Any], Any]] = field(default_factory=dict)

    def cel_record(self, record: dict[str, Any]) -> Any:
        from etikett.cel import to_cel

        known = self.converted.get(id(record))
        if known is not None and known[0] is record:
            return known[1]
        value = to_cel(record)
        self.converted[id(record)] = (record, value)
        return value

    def bind(self, record: dict[str, Any]) -> dict[str, Any]:
        return {"record": self.cel_record(record), **self.env_values}

    def derived(
        self, source: dict[str, Any], output: dict[str, Any], changed: dict[str, Any]
    ) -> None:
        """`output` is `source` with `changed` set: convert only those fields."""
        from etikett.cel import to_cel

        base = self.cel_record(source)
        value = type(base)(base)
        for name, item in changed.items():
            value[to_cel(name)] = to_cel(item)
        self.converted[id(output)] = (output, value)

    def perform(self, kind: str, node_id: str, call: Callable[[], Outcome]) -> Outcome:
        try:
            outcome = call()
        except EffectFailed as error:
            if error.detail is not None:
                self.side_effects.append(
                    {"node_id": node_id, "kind": kind, "performed": False, "detail": error.detail}
                )
            raise NodeError(str(error)) from None
        self.side_effects.append(
            {"node_id": node_id, "kind": kind, "performed": outcome.performed, **_detail(outcome)}
        )
        return outcome


def _detail(outcome: Outcome) -> dict[str, Any]:
    return {"detail": outcome.detail}


class FlowProgram:
    """A flow document made runnable."""

    def __init__(self, document: FlowDocument) -> None:
        self.document = document
        self.nodes: dict[str, FlowNode] = {node.id: node for node in document.nodes}
        self._steps: dict[str, Step] = {node.id: _step(node) for node in document.nodes}
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
        from etikett.cel import to_cel

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
        context = _Context(
            env_values if env_values is not None else self.env_values(env),
            effects,
            env.run_id,
            record_index,
            [],
        )
        entries: dict[str, dict[str, Any]] = {}
        errors: list[dict[str, Any]] = []
        try:
            _check_size(record, "the record")
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


def _check_size(value: Any, what: str) -> None:
    if value is None or isinstance(value, bool | int | float):
        return
    if isinstance(value, str):
        size = len(value)
        if size > MAX_VALUE_BYTES:
            raise NodeError(f"{what} is {size} characters; at most {MAX_VALUE_BYTES}")
        return
    try:
        size = len(json.dumps(value, default=str, separators=(",", ":")))
    except (TypeError, ValueError):
        return
    if size > MAX_VALUE_BYTES:
        raise NodeError(f"{what} is {size} bytes as JSON; at most {MAX_VALUE_BYTES}")


# --- one step per node type --------------------------------------------------------------


def _step(node: FlowNode) -> Step:
    spec = NODE_SPECS.get(node.type)
    if spec is None:
        return _broken(f"{node.type!r} is not a node type")
    try:
        fields = spec.model.model_validate(node.fields())
    except ValidationError as error:
        first = error.errors(include_url=False)[0]
        where = ".".join(map(str, first["loc"])) or "fields"
        return _broken(f"the node's fields are invalid ({where}: {first['msg']})")
    builder = _BUILDERS.get(node.type)
    if builder is None:  # triggers pass the record on as it came
        wires = list(node.wires)
        return lambda record, context: (record, wires)
    return builder(node, fields)


def _broken(message: str) -> Step:
    def step(record: dict[str, Any], context: _Context) -> Any:
        raise NodeError(message)

    return step


def _set(node: FlowNode, fields: Any) -> Step:
    values = {name: _Compiled(source) for name, source in fields.values.items()}
    wires = list(node.wires)

    def step(record: dict[str, Any], context: _Context) -> Any:
        bound = context.bind(record)
        changed = {name: compiled.value(bound) for name, compiled in values.items()}
        output = {**record, **changed}
        if any(not isinstance(v, bool | int | float | None) for v in changed.values()):
            _check_size(output, "the record")
        context.derived(record, output, changed)
        return output, wires

    return step


def _filter(node: FlowNode, fields: Any) -> Step:
    condition = _Compiled(fields.condition)
    wires = list(node.wires)

    def step(record: dict[str, Any], context: _Context) -> Any:
        passed = condition.value(context.bind(record))
        if not isinstance(passed, bool):
            raise NodeError(f"the condition gave {type(passed).__name__}, not a bool")
        return (record if passed else None), wires

    return step


def _switch(node: FlowNode, fields: Any) -> Step:
    cases = [(_Compiled(case.when), list(case.wires)) for case in fields.cases]
    otherwise = list(fields.otherwise or [])

    def step(record: dict[str, Any], context: _Context) -> Any:
        bound = context.bind(record)
        for index, (when, wires) in enumerate(cases):
            matched = when.value(bound)
            if not isinstance(matched, bool):
                raise NodeError(f"case {index} gave {type(matched).__name__}, not a bool")
            if matched:
                return record, wires
        return record, otherwise

    return step


def _print(node: FlowNode, fields: Any) -> Step:
    variables = {name: _Compiled(source) for name, source in fields.variables.items()}
    copies = _Compiled(fields.copies) if fields.copies else None
    wires = list(node.wires)

    def step(record: dict[str, Any], context: _Context) -> Any:
        bound = context.bind(record)
        resolved = {name: compiled.value(bound) for name, compiled in variables.items()}
        count = copies.value(bound) if copies else 1
        if isinstance(count, bool) or not isinstance(count, int):
            raise NodeError(f"copies gave {type(count).__name__}, not an int")
        if not 1 <= count <= MAX_COPIES:
            raise NodeError(f"copies is {count}; 1 to {MAX_COPIES}")
        intent = PrintIntent(
            node_id=node.id,
            label=fields.label,
            printer=fields.printer,
            copies=count,
            variables=resolved,
            idempotency_key=f"{context.run_id}:{node.id}:{context.record_index}",
        )
        outcome = context.perform("print", node.id, lambda: context.effects.print(intent))
        return {**record, "print": outcome.result}, wires

    return step


def _http(node: FlowNode, fields: Any) -> Step:
    body = _Compiled(fields.body) if fields.body else None
    wires = list(node.wires)

    def step(record: dict[str, Any], context: _Context) -> Any:
        payload = body.value(context.bind(record)) if body else None
        intent = HttpIntent(node.id, fields.url, fields.method, payload, fields.credential)
        outcome = context.perform("http", node.id, lambda: context.effects.http(intent))
        return {**record, "http": outcome.result}, wires

    return step


def _file(node: FlowNode, fields: Any) -> Step:
    path, content = _Compiled(fields.path), _Compiled(fields.content)
    wires = list(node.wires)

    def step(record: dict[str, Any], context: _Context) -> Any:
        bound = context.bind(record)
        where = path.value(bound)
        if not isinstance(where, str) or not where:
            raise NodeError("path must give a non-empty string")
        text = content.value(bound)
        if not isinstance(text, str):
            text = json.dumps(text, default=str)
        intent = FileIntent(node.id, where, text)
        context.perform("file", node.id, lambda: context.effects.file(intent))
        return record, wires

    return step


def _log(node: FlowNode, fields: Any) -> Step:
    message = _Compiled(fields.message)
    wires = list(node.wires)

    def step(record: dict[str, Any], context: _Context) -> Any:
        text = message.value(context.bind(record))
        intent = LogIntent(node.id, fields.level, text if isinstance(text, str) else str(text))
        context.perform("log", node.id, lambda: context.effects.log(intent))
        return record, wires

    return step


_BUILDERS: dict[str, Callable[[FlowNode, Any], Step]] = {
    "logic.set": _set,
    "logic.filter": _filter,
    "logic.switch": _switch,
    "action.print": _print,
    "action.http": _http,
    "action.file": _file,
    "action.log": _log,
}
