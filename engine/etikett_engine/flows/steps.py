"""What each node of a flow does to one record: a step per node type, built once per document
version, with the CEL expressions it evaluates compiled once and the side effects it performs
recorded in the record's context.
"""

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from etikett_engine.cel import Bindings, CelInvalid, Expression, to_cel
from etikett_engine.cel.values import with_fields
from etikett_engine.dsl.flow import FlowNode
from etikett_engine.dsl.flow_registry import NODE_SPECS
from etikett_engine.flows.effects import (
    EffectFailed,
    Effects,
    FileIntent,
    HttpIntent,
    LogIntent,
    Outcome,
    PrintIntent,
)
from etikett_engine.flows.lint import check_expression

MAX_VALUE_BYTES = 64_000
MAX_COPIES = 1000


class NodeError(Exception):
    """This record cannot go through this node; the message says why, in the flow's words."""


class Compiled:
    """A CEL expression compiled once; `problem` when it cannot run (lint says so too)."""

    __slots__ = ("expression", "problem", "source")

    def __init__(self, source: Any) -> None:
        self.source = source
        self.expression = None
        self.problem = check_expression(source) if isinstance(source, str) else "not a string"
        if self.problem is None:
            self.expression = Expression(source)

    def value(self, bound: Mapping[str, Any]) -> Any:
        if self.expression is None:
            raise NodeError(f"CEL {self.source!r}: {self.problem}")
        try:
            result = self.expression.run(bound)
        except CelInvalid as error:
            raise NodeError(f"CEL {self.source!r}: {error.params.get('message')}") from None
        check_size(result, "the expression's value")
        return result


Step = Callable[[dict[str, Any], "StepContext"], tuple[dict[str, Any] | None, list[str]]]


@dataclass
class StepContext:
    env_values: dict[str, Any]
    effects: Effects
    run_id: str
    record_index: int
    side_effects: list[dict[str, Any]]
    # Records already converted to CEL, by identity: a record is converted once, and a set
    # node converts only the fields it sets (records are never changed in place).
    converted: dict[int, tuple[dict[str, Any], Any]] = field(default_factory=dict)

    def cel_record(self, record: dict[str, Any]) -> Any:
        known = self.converted.get(id(record))
        if known is not None and known[0] is record:
            return known[1]
        value = to_cel(record)
        self.converted[id(record)] = (record, value)
        return value

    def bind(self, record: dict[str, Any]) -> Bindings:
        return Bindings({"record": self.cel_record(record), **self.env_values})

    def derived(
        self, source: dict[str, Any], output: dict[str, Any], changed: dict[str, Any]
    ) -> None:
        """`output` is `source` with `changed` set: convert only those fields."""
        self.converted[id(output)] = (output, with_fields(self.cel_record(source), changed))

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


# What json.dumps(value, default=str, separators=(",", ":")) builds on every call, built once.
_COMPACT = json.JSONEncoder(default=str, separators=(",", ":"))


def check_size(value: Any, what: str) -> None:
    if value is None or isinstance(value, bool | int | float):
        return
    if isinstance(value, str):
        size = len(value)
        if size > MAX_VALUE_BYTES:
            raise NodeError(f"{what} is {size} characters; at most {MAX_VALUE_BYTES}")
        return
    try:
        size = len(_COMPACT.encode(value))
    except (TypeError, ValueError):
        return
    if size > MAX_VALUE_BYTES:
        raise NodeError(f"{what} is {size} bytes as JSON; at most {MAX_VALUE_BYTES}")


def step_for(node: FlowNode) -> Step:
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
    def step(record: dict[str, Any], context: StepContext) -> Any:
        raise NodeError(message)

    return step


def _set(node: FlowNode, fields: Any) -> Step:
    values = {name: Compiled(source) for name, source in fields.values.items()}
    wires = list(node.wires)

    def step(record: dict[str, Any], context: StepContext) -> Any:
        bound = context.bind(record)
        changed = {name: compiled.value(bound) for name, compiled in values.items()}
        output = {**record, **changed}
        if any(not isinstance(v, bool | int | float | None) for v in changed.values()):
            check_size(output, "the record")
        context.derived(record, output, changed)
        return output, wires

    return step


def _filter(node: FlowNode, fields: Any) -> Step:
    condition = Compiled(fields.condition)
    wires = list(node.wires)

    def step(record: dict[str, Any], context: StepContext) -> Any:
        passed = condition.value(context.bind(record))
        if not isinstance(passed, bool):
            raise NodeError(f"the condition gave {type(passed).__name__}, not a bool")
        return (record if passed else None), wires

    return step


def _switch(node: FlowNode, fields: Any) -> Step:
    cases = [(Compiled(case.when), list(case.wires)) for case in fields.cases]
    otherwise = list(fields.otherwise or [])

    def step(record: dict[str, Any], context: StepContext) -> Any:
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
    variables = {name: Compiled(source) for name, source in fields.variables.items()}
    copies = Compiled(fields.copies) if fields.copies else None
    wires = list(node.wires)

    def step(record: dict[str, Any], context: StepContext) -> Any:
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
    body = Compiled(fields.body) if fields.body else None
    wires = list(node.wires)

    def step(record: dict[str, Any], context: StepContext) -> Any:
        payload = body.value(context.bind(record)) if body else None
        intent = HttpIntent(node.id, fields.url, fields.method, payload, fields.credential)
        outcome = context.perform("http", node.id, lambda: context.effects.http(intent))
        return {**record, "http": outcome.result}, wires

    return step


def _file(node: FlowNode, fields: Any) -> Step:
    path, content = Compiled(fields.path), Compiled(fields.content)
    wires = list(node.wires)

    def step(record: dict[str, Any], context: StepContext) -> Any:
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
    message = Compiled(fields.message)
    wires = list(node.wires)

    def step(record: dict[str, Any], context: StepContext) -> Any:
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
