"""moto's condition and filter expressions parsed once per text, not once per item.

moto lexes and parses a write's ConditionExpression twice per item (to check the request, then to
evaluate it), though a service sends the same few texts again and again: in a TransactWriteItems
of a hundred items (a sync of offline prints) that was a sixth of local AWS's time. `install()`
keeps each parse — the tree and the names and values it found — by the expression's text, names
and values, and hands the same tree out again. The tree is only read when it is evaluated; each
caller gets its own lists of what was found (moto's callers extend them).
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from typing import Any

import moto.dynamodb.models as dynamodb_models
from moto.dynamodb import comparisons, responses
from moto.dynamodb.comparisons import ConditionExpressionParser

__all__ = ["install", "parsed_count"]

# Different texts seen by one local AWS: a few hundred (each repository's conditions and each
# Query's filters, with their values); the oldest beyond that are parsed again when they come.
_KEPT = 512
_installed = threading.Lock()
_MARK = "_etikett_remembered_conditions"
_Parse = tuple[Any, tuple[str, ...], tuple[str, ...]]


class _Parses:
    """The parses kept, the least recently used first out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # requests that only read run side by side
        self._kept: OrderedDict[str, _Parse] = OrderedDict()
        self.parsed = 0  # real parses (for tests)

    def get(self, key: str) -> _Parse | None:
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
            return found

    def keep(self, key: str, parse: _Parse) -> None:
        with self._lock:
            self.parsed += 1
            self._kept[key] = parse
            while len(self._kept) > _KEPT:
                self._kept.popitem(last=False)


_parses = _Parses()


def parsed_count() -> int:
    """How many expressions were really parsed (not handed out again) in this process."""
    return _parses.parsed


class _RememberingParser(ConditionExpressionParser):
    """moto's parser, answering from a parse kept for the same expression when there is one."""

    def __init__(
        self,
        expression: str | None,
        names: dict[str, str] | None,
        values: dict[str, dict[str, str]] | None,
    ) -> None:
        super().__init__(expression, names, values)
        self._key = _key(expression, names, values)
        self._tree: Any = None
        kept = _parses.get(self._key) if self._key is not None else None
        if kept is not None:
            self._tree = kept[0]
            self.expr_attr_names_found = list(kept[1])
            self.expr_attr_values_found = list(kept[2])

    def parse(self) -> Any:
        if self._tree is not None:
            return self._tree
        self.expr_attr_names_found = []
        self.expr_attr_values_found = []
        tree = super().parse()  # raises for an invalid expression: nothing kept
        if self._key is not None:
            found = (tuple(self.expr_attr_names_found), tuple(self.expr_attr_values_found))
            _parses.keep(self._key, (tree, *found))
        self._tree = tree
        return tree


def _key(
    expression: str | None, names: dict[str, str] | None, values: dict[str, Any] | None
) -> str | None:
    """The parse's key: the text, the names and the values, exactly (None: not keepable)."""
    if not expression:
        return None  # moto's answer for no expression is a fresh default, cheap already
    try:
        # None and {} parse alike (an expression that needs a name or value fails without it,
        # and failures are not kept); moto passes one or the other depending on the request.
        return json.dumps([expression, names or None, values or None], sort_keys=True)
    except (TypeError, ValueError):
        return None  # binary values (bytes): parsed each time, as moto does


def _create(
    expression: str | None,
    names: dict[str, str] | None,
    values: dict[str, dict[str, str]] | None,
) -> ConditionExpressionParser:
    return _RememberingParser(expression, names, values)


def install() -> None:
    """Patch moto's DynamoDB expression parsing (process-wide, idempotent)."""
    with _installed:
        if getattr(comparisons.create_condition_expression_parser, _MARK, False):
            return
        setattr(_create, _MARK, True)
        # get_filter_expression (the evaluation) looks the factory up in its own module; the
        # request checks and the backend imported it by name.
        for module in (comparisons, responses, dynamodb_models):
            setattr(module, "create_condition_expression_parser", _create)  # noqa: B010
