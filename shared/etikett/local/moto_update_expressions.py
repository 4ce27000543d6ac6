"""moto's update expressions parsed once per text and checked without its per-call overheads.

For every Update (an UpdateItem, each Update in a TransactWriteItems) moto parses the update
expression twice (to check the request, then to apply it), deep-copies the tree, and walks it with
ten checkers, three of which look only at the expression, its names and the table's keys: about
half of local AWS's time in a print's transactions. `install()` keeps each text's tree (the
callers only read it; the copy each validation changes is unpickled from the tree kept, the same
tree as moto's deep copy, faster), runs the three expression-only checks once per text, names and
table keys (an expression that fails them fails again, since nothing is kept for it), and walks
each tree with each node class's handler looked up once per walk, not twice per node.
"""

from __future__ import annotations

import json
import pickle
import threading
from collections import OrderedDict
from typing import Any

import moto.dynamodb.models as dynamodb_models
from moto.dynamodb import responses
from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser, Node  # type: ignore[attr-defined]
from moto.dynamodb.parsing.expressions import UpdateExpressionParser  # type: ignore[attr-defined]
from moto.dynamodb.parsing.validators import (
    ActionCountValidator,
    OverlappingPathsValidator,
    UpdateExpressionValidator,
    UpdateHashRangeKeyValidator,
)

__all__ = ["ORIGINAL", "install", "parsed_count"]

# Different update expressions seen by one local AWS: a few dozen (pynamodb numbers its names and
# values, so the text depends only on which attributes an update sets); the oldest go first.
_KEPT = 512
_EXPRESSION_ONLY = (ActionCountValidator, OverlappingPathsValidator, UpdateHashRangeKeyValidator)
_installed = threading.Lock()
# moto's own tree walk, for the tests that compare with it
ORIGINAL = {"traverse_node_recursively": DepthFirstTraverser.traverse_node_recursively}
_MARK = "_etikett_remembered_update_expressions"


class _Tree:
    """A parsed update expression as kept: the tree handed out, and its pickle to copy from."""

    __slots__ = ("checked", "pickled", "tree")

    def __init__(self, tree: Any) -> None:
        self.tree = tree
        self.pickled = pickle.dumps(tree, pickle.HIGHEST_PROTOCOL)
        self.checked: set[str] = set()  # names and table keys the expression-only checks passed


class _Trees:
    """The trees kept by text, the least recently used first out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_text: OrderedDict[str, _Tree] = OrderedDict()
        self._by_tree: dict[int, _Tree] = {}  # id of a kept tree → its entry (kept alive there)
        self.parsed = 0  # real parses (for tests)

    def get(self, text: str) -> _Tree | None:
        with self._lock:
            found = self._by_text.get(text)
            if found is not None:
                self._by_text.move_to_end(text)
            return found

    def of_tree(self, tree: Any) -> _Tree | None:
        with self._lock:
            found = self._by_tree.get(id(tree))
            return found if found is not None and found.tree is tree else None

    def keep(self, text: str, tree: Any) -> None:
        entry = _Tree(tree)
        with self._lock:
            self.parsed += 1
            self._by_text[text] = entry
            self._by_tree[id(tree)] = entry
            while len(self._by_text) > _KEPT:
                _, gone = self._by_text.popitem(last=False)
                self._by_tree.pop(id(gone.tree), None)


_trees = _Trees()


def parsed_count() -> int:
    """How many update expressions were really parsed (not handed out again) in this process."""
    return _trees.parsed


class _RememberingParser(UpdateExpressionParser):  # type: ignore[misc]
    """moto's parser, answering from the tree kept for the same text when there is one."""

    @classmethod
    def make(cls, expression_str: str) -> Any:
        kept = _trees.get(expression_str)
        if kept is not None:
            return kept.tree
        tree = UpdateExpressionParser.make(expression_str)  # raises if invalid: nothing kept
        _trees.keep(expression_str, tree)
        return tree


class _RememberingValidator(UpdateExpressionValidator):
    """moto's validator: the copy of a kept tree unpickled, and the expression-only checks
    skipped where the same tree with the same names and table keys passed them before."""

    def __init__(
        self,
        expression: Any,
        expression_attribute_names: dict[str, str],
        expression_attribute_values: dict[str, dict[str, Any]],
        item: Any,
        table: Any,
    ) -> None:
        self._kept = _trees.of_tree(expression)
        if self._kept is None:
            super().__init__(
                expression, expression_attribute_names, expression_attribute_values, item, table
            )
            return
        # moto's __init__ without its deep copy: the kept tree's pickle makes the same copy.
        self.expression_attribute_names = expression_attribute_names
        self.expression_attribute_values = expression_attribute_values
        self.item = item
        self.table = table
        self.processors = self.get_ast_processors()
        self.node_to_validate = pickle.loads(
            self._kept.pickled
        )  # our own bytes, made from the tree kept

    def validate(self) -> Any:
        kept = self._kept
        if kept is None:
            return super().validate()
        checks = _checks_key(self.expression_attribute_names, self.table.table_key_attrs)
        node = self.node_to_validate
        for processor in self.processors:
            if checks is not None and checks in kept.checked and _expression_only(processor):
                continue
            node = processor.traverse(node)
        if checks is not None:
            kept.checked.add(checks)  # reached only when every check passed
        return node


def _expression_only(processor: Any) -> bool:
    return type(processor) in _EXPRESSION_ONLY


def _checks_key(names: dict[str, str] | None, keys: list[str]) -> str | None:
    try:
        return json.dumps([names or None, list(keys)], sort_keys=True)
    except (TypeError, ValueError):
        return None  # not a plain mapping of names: checked each time, as moto does


def _traverse_node_recursively(self: Any, node: Any, child_id: int = -1) -> Any:
    """moto's DepthFirstTraverser.traverse_node_recursively, line for line, with its two
    isinstance checks against abstract classes (and the node map they rebuilt) looked up once
    per node class."""
    if _is_node(type(node)):
        parent_node = node.parent
        if node.children is not None:
            for i, child_node in enumerate(node.children):
                self.pre_processing_of_child(node, i)
                self.traverse_node_recursively(child_node, i)
        handler = _handler(self, type(node))
        if handler is not None:
            node = handler(node)
            node.parent = parent_node
            if parent_node:
                parent_node.children[child_id] = node
    return node


_node_classes: dict[type, bool] = {}


def _is_node(cls: type) -> bool:
    found = _node_classes.get(cls)
    if found is None:
        found = _node_classes[cls] = issubclass(cls, Node)
    return found


def _handler(traverser: Any, cls: type) -> Any:
    """The traverser's handler of a node class: the first of its map that the class is a subclass
    of (moto's `process`), kept per traverser; moto's maps are constant (classes and the
    traverser's own bound methods), and no class registers with its abstract classes."""
    handlers: dict[type, Any] | None = traverser.__dict__.get(_MARK)
    if handlers is None:
        handlers = traverser.__dict__[_MARK] = {}
    if cls in handlers:
        return handlers[cls]
    found = None
    for class_key, processor in traverser._processing_map().items():
        if issubclass(cls, class_key):
            found = processor
            break
    handlers[cls] = found
    return found


def install() -> None:
    """Patch moto's update expression parsing and validation (process-wide, idempotent)."""
    with _installed:
        if getattr(dynamodb_models, "UpdateExpressionParser", None) is _RememberingParser:
            return
        # The backend and the request checks imported both names for themselves.
        for module in (dynamodb_models, responses):
            setattr(module, "UpdateExpressionParser", _RememberingParser)  # noqa: B010
        setattr(dynamodb_models, "UpdateExpressionValidator", _RememberingValidator)  # noqa: B010
        DepthFirstTraverser.traverse_node_recursively = _traverse_node_recursively
