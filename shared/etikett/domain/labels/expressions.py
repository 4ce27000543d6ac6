"""Trying CEL expressions against sample data: the variable editor's evaluate button."""

from datetime import datetime
from typing import Any

from pydantic import ConfigDict, Field

from etikett import clock
from etikett_engine.dsl.label import VariableType
from etikett_engine.model import Model


class CelEvaluation(Model):
    model_config = ConfigDict(extra="forbid")
    expression: str = Field(
        min_length=1, max_length=4000, examples=['pad(counters.serial, 6) + "-" + upper(batch)']
    )
    variables: dict[str, Any] = Field(default_factory=dict, description="Sample values by name.")
    types: dict[str, VariableType] = Field(
        default_factory=dict, description="Declared types; a value without one is typed by JSON."
    )
    counters: dict[str, Any] = Field(default_factory=dict, description="Values of `counters.*`.")
    now: datetime | None = Field(default=None, description="RFC 3339; default the current time.")
    label_id: str | None = Field(
        default=None, description="Take types (and samples for missing values) from this label."
    )


class CelResult(Model):
    value: Any
    type: str = Field(description="CEL type of the value: string, int, double, bool, timestamp, …")


def _json(value: Any) -> Any:
    if isinstance(value, datetime):
        return clock.rfc3339(value)
    if isinstance(value, list):
        return [_json(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v) for k, v in value.items()}
    if isinstance(value, bytes):
        return value.decode("latin-1")
    return value


def evaluate(request: CelEvaluation) -> CelResult:
    # Loaded here, not at the mcp and misc functions' cold start.
    from etikett_engine import cel

    types = dict(request.types)
    values = dict(request.variables)
    if request.label_id is not None:
        # Only an evaluation against a label reads its versions: not at the misc cold start.
        from etikett.domain.labels.label_versions import label_document

        _, document = label_document(request.label_id)
        for variable in document.variables:
            types.setdefault(variable.name, variable.type)
            if variable.name not in values and variable.expression is None:
                sample = variable.sample if variable.sample is not None else variable.default
                if sample is not None:
                    values[variable.name] = sample
    cel.check(request.expression, types, extra_names=[k for k in values if k not in types])
    value = cel.evaluate(
        request.expression, values, types, now=request.now, counters=request.counters
    )
    return CelResult(value=_json(value), type=cel.type_name(value))
