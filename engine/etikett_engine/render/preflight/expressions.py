"""Preflight of a label's expressions and variables: each compiled against the declared
variables, variables no expression uses, and the values a preview would lay the label out with.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from etikett_engine import cel
from etikett_engine.dsl.label import BarcodeObject, TextObject
from etikett_engine.dsl.preflight import LabelFinding, pointer
from etikett_engine.errors import EtikettError
from etikett_engine.render.errors import VariablesInvalid
from etikett_engine.render.preflight.findings import label_finding
from etikett_engine.render.values import declared_types, resolve_variables

if TYPE_CHECKING:
    from etikett_engine.dsl.label import LabelDocument


def expression_findings(document: LabelDocument) -> tuple[LabelFinding, ...]:
    """Compiled against the declared variables. Kept per document object (a parsed version is
    checked once, however often it is previewed: documents are values, never changed in place)
    and by the expressions and declarations (the same version parsed again)."""
    kept = _BY_DOCUMENT.get(id(document))
    if kept is not None and kept[0]() is document:
        return kept[1]
    key = (
        tuple([(v.name, v.type, v.expression) for v in document.variables]),
        tuple([(o.id, getattr(o, "expression", None)) for o in document.objects]),
    )
    found = _EXPRESSION_FINDINGS.get(key)
    if found is None:
        if len(_EXPRESSION_FINDINGS) >= 1024:
            _EXPRESSION_FINDINGS.clear()
        found = _EXPRESSION_FINDINGS[key] = tuple(_check_expressions(document))
    number = id(document)
    _BY_DOCUMENT[number] = (weakref.ref(document, lambda _: _BY_DOCUMENT.pop(number, None)), found)
    return found


_EXPRESSION_FINDINGS: dict[tuple[Any, ...], tuple[LabelFinding, ...]] = {}
# id of a live document → (a reference that notices when it is gone, its findings)
_BY_DOCUMENT: dict[int, tuple[weakref.ref[LabelDocument], tuple[LabelFinding, ...]]] = {}


def _check_expressions(document: LabelDocument) -> list[LabelFinding]:

    declared = declared_types(document)
    sources: list[tuple[str, str | None, str]] = [
        (pointer("variables", i, "expression"), None, v.expression)
        for i, v in enumerate(document.variables)
        if v.expression is not None
    ]
    sources += [
        (pointer("objects", i, "expression"), o.id, o.expression)
        for i, o in enumerate(document.objects)
        if isinstance(o, TextObject | BarcodeObject) and o.expression is not None
    ]
    findings: list[LabelFinding] = []
    used: set[str] = set()
    for path, object_id, source in sources:
        try:
            cel.check(source, declared)
            used |= cel.Expression(source).names
        except EtikettError as error:
            message = str(error.params.get("message") or error.detail)
            code = "label.variable_undeclared" if "undeclared" in message else "label.cel_invalid"
            findings.append(
                label_finding(
                    code,
                    path,
                    object_id,
                    error.detail,
                    line=error.params.get("line"),
                    column=error.params.get("column"),
                )
            )
    for index, variable in enumerate(document.variables):
        if variable.name not in used:
            findings.append(
                label_finding(
                    "label.variable_unused",
                    pointer("variables", index),
                    None,
                    f"The variable {variable.name!r} is declared but no expression uses it.",
                    variable=variable.name,
                )
            )
    return findings


def preview_values(
    document: LabelDocument,
    counters: Mapping[str, Any] | None,
    now: datetime | None,
    findings: list[LabelFinding],
) -> dict[str, Any] | None:
    """The preview's values; variables without a usable value are left empty (and reported on
    the objects that need them)."""

    try:
        return resolve_variables(document, {}, use_samples=True, now=now, counters=counters)
    except VariablesInvalid as error:
        broken = {item["variable"] for item in error.params.get("errors", [])}
    relaxed = document.model_copy(
        update={
            "variables": [
                v.model_copy(
                    update={"required": False, "expression": None, "default": None, "sample": None}
                )
                if v.name in broken
                else v.model_copy(update={"required": False})
                for v in document.variables
            ]
        }
    )
    try:
        return resolve_variables(relaxed, {}, use_samples=True, now=now, counters=counters)
    except VariablesInvalid:
        findings.append(
            label_finding(
                "label.sample_failed",
                "/variables",
                None,
                "The variables' samples and defaults do not resolve; nothing was laid out.",
            )
        )
        return None
