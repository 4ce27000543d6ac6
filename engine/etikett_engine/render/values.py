"""Print data → the values a label is rendered with, and the text each text/barcode object shows.

Entered variables take the provided value, else (previews) their `sample`, else their `default`;
optional variables left without a value are null. Computed variables (`expression`) are evaluated
with CEL in dependency order. Every bad variable is reported at once (`VariablesInvalid`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from etikett_engine import cel
from etikett_engine.errors import EtikettError
from etikett_engine.render.errors import VariablesInvalid, with_object

if TYPE_CHECKING:
    from etikett_engine.dsl.label import (
        BarcodeObject,
        LabelDocument,
        TextObject,
        Variable,
        VariableType,
    )

_MISSING = object()
# String literals (CEL's quotes, raw and triple-quoted forms) hide names from the dependency scan.
_STRINGS = re.compile(
    r"[rRbB]{0,2}(?:"
    r"'''(?:\\.|[^\\])*?'''"
    r'|"""(?:\\.|[^\\])*?"""'
    r"|'(?:\\.|[^'\\\n])*'"
    r'|"(?:\\.|[^"\\\n])*")',
    re.DOTALL,
)
# A name not preceded by `.` (a field selection like `counters.box` is not a variable).
_NAME = re.compile(r"(?<![.\w])([A-Za-z_][A-Za-z0-9_]*)")


def declared_types(document: LabelDocument) -> dict[str, VariableType]:
    return {variable.name: variable.type for variable in document.variables}


def resolve_variables(
    document: LabelDocument,
    provided: Mapping[str, Any] | None,
    *,
    use_samples: bool,
    now: datetime | None = None,
    counters: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Every declared variable's typed value; raises `VariablesInvalid` naming all bad ones."""

    provided = dict(provided or {})
    errors: list[dict[str, str]] = []
    values: dict[str, Any] = {}
    by_name = {variable.name: variable for variable in document.variables}

    for name in provided:
        variable = by_name.get(name)
        if variable is None:
            errors.append(_error(name, "is not a variable of this label"))
        elif variable.expression is not None:
            errors.append(_error(name, "is computed by its expression and cannot be provided"))

    computed = [v for v in document.variables if v.expression is not None]
    for variable in document.variables:
        if variable.expression is not None:
            continue
        source, raw = _entered_value(variable, provided, use_samples)
        if raw is _MISSING:
            if variable.required:
                errors.append(_error(variable.name, "is required"))
            values[variable.name] = None
            continue
        try:
            values[variable.name] = cel.coerce(raw, variable.type)
        except ValueError as exc:
            errors.append(_error(variable.name, f"{source}: {exc}" if source else str(exc)))

    order, cycle_errors = _evaluation_order(computed, set(by_name))
    errors.extend(cycle_errors)
    if errors:
        raise VariablesInvalid(_sorted(errors, document))

    declared = declared_types(document)
    failed: set[str] = set()
    for variable in order:
        assert variable.expression is not None
        broken = sorted(_references(variable.expression) & failed)
        if broken:
            failed.add(variable.name)
            errors.append(_error(variable.name, f"depends on invalid {', '.join(broken)}"))
            continue
        try:
            result = cel.evaluate(variable.expression, values, declared, now=now, counters=counters)
            values[variable.name] = cel.coerce(result, variable.type)
        except (EtikettError, ValueError) as exc:
            failed.add(variable.name)
            detail = exc.detail if isinstance(exc, EtikettError) else str(exc)
            errors.append(_error(variable.name, detail))
    if errors:
        raise VariablesInvalid(_sorted(errors, document))
    return values


def object_text(
    obj: TextObject | BarcodeObject,
    values: Mapping[str, Any],
    declared: Mapping[str, VariableType] | None,
    *,
    now: datetime | None = None,
    counters: Mapping[str, Any] | None = None,
) -> str:
    """What a text or barcode object shows: its literal `content` or its CEL `expression`."""
    if obj.expression is None:
        return obj.content or ""

    try:
        result = cel.evaluate(obj.expression, values, declared, now=now, counters=counters)
    except EtikettError as exc:
        raise with_object(exc, obj.id) from exc
    return display(result)


def display(value: Any) -> str:
    """A CEL result as printed text: booleans as CEL writes them, whole doubles without `.0`."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and abs(value) < 1e16:
            return str(int(value))
        return repr(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _entered_value(
    variable: Variable, provided: Mapping[str, Any], use_samples: bool
) -> tuple[str, Any]:
    value = provided.get(variable.name)
    if value is not None:
        return "", value
    # A preview shows the designer's sample before the default: a Vorlage's empty defaults
    # ("" for an optional line) would otherwise leave its preview half-empty.
    if use_samples and variable.sample is not None:
        return "sample", variable.sample
    if variable.default is not None:
        return "default", variable.default
    return "", _MISSING


def _references(expression: str) -> set[str]:
    return set(_NAME.findall(_STRINGS.sub(" ", expression)))


def _evaluation_order(
    computed: list[Variable], declared: set[str]
) -> tuple[list[Variable], list[dict[str, str]]]:
    """Computed variables after the computed variables they use; cycles are reported, not run."""
    by_name = {variable.name: variable for variable in computed}
    needs = {
        variable.name: sorted((_references(variable.expression or "") & declared) & set(by_name))
        for variable in computed
    }
    order: list[Variable] = []
    state: dict[str, int] = {}  # 1 = on the current path, 2 = placed
    errors: list[dict[str, str]] = []
    in_cycle: set[str] = set()

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = [*path[path.index(name) :], name]
            members = set(cycle)
            if not members & in_cycle:
                errors.append(_error(name, "computed variables form a cycle: " + " → ".join(cycle)))
            in_cycle.update(members)
            return
        state[name] = 1
        for dependency in needs[name]:
            visit(dependency, [*path, name])
        state[name] = 2
        if name not in in_cycle:
            order.append(by_name[name])

    for variable in computed:
        visit(variable.name, [])
    return order, errors


def _error(name: str, message: str) -> dict[str, str]:
    return {"variable": name, "message": message}


def _sorted(errors: list[dict[str, str]], document: LabelDocument) -> list[dict[str, str]]:
    """Declaration order, unknown names last: the same print data always gives the same answer."""
    rank = {variable.name: index for index, variable in enumerate(document.variables)}
    return sorted(errors, key=lambda error: rank.get(error["variable"], len(rank)))
