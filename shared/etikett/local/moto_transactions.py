"""TransactWriteItems in moto without copying whole tables.

moto applies a transaction's operations one by one and, to undo them when one fails, first
deep-copies every table the transaction touches. Those copies grow with the tables: with a few
thousand audit entries every audited change spends most of its time copying the audit table,
and local mode gets slower the longer it is used. `install()` replaces the copies by an undo
log of just the items the transaction names (and the length of each table's stream, so that a
cancelled transaction leaves no stream records behind), which restores the same state.

A table named by an operation whose key cannot be read (moto then refuses the transaction)
keeps moto's whole-table copy.
"""

from __future__ import annotations

import copy
import functools
import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, cast

import moto.dynamodb.models as dynamodb_models
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table

__all__ = ["install"]

_installed = threading.Lock()
_MARK = "_etikett_undo_log"


def install() -> None:
    """Patch moto's DynamoDB backend (process-wide, idempotent)."""
    with _installed:
        original = DynamoDBBackend.transact_write_items
        if getattr(original, _MARK, False):
            return

        @functools.wraps(original)
        def transact_write_items(
            self: DynamoDBBackend, transact_items: list[dict[str, Any]]
        ) -> None:
            undo = _UndoLog.capture(self, transact_items)
            _covered.tables = undo.tables
            try:
                original(self, transact_items)
            except BaseException:
                undo.restore()
                raise
            finally:
                _covered.tables = frozenset()

        setattr(transact_write_items, _MARK, True)
        # The patch this module exists for (mypy refuses assignments to methods)
        DynamoDBBackend.transact_write_items = transact_write_items  # type: ignore[method-assign]
        # The only other deepcopy in moto's backend module copies a single item; tables that the
        # undo log covers are handed back as they are instead of copied.
        # (setattr: the module imports `copy` for itself, it does not export it)
        setattr(dynamodb_models, "copy", _CopyExceptCoveredTables("copy"))  # noqa: B010


_covered = threading.local()


class _CopyExceptCoveredTables(ModuleType):
    """Stands in for the `copy` module in moto's backend module, which uses only deepcopy."""

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        return _deepcopy_except_covered_tables(value, memo)


def _deepcopy_except_covered_tables(value: Any, memo: dict[int, Any] | None = None) -> Any:
    if isinstance(value, Table) and id(value) in getattr(_covered, "tables", ()):
        return value  # moto "restores" it to itself; the undo log does the real work
    return copy.deepcopy(value, memo)


@dataclass
class _UndoLog:
    items: list[tuple[Table, DynamoType, DynamoType | None, Item | None]] = field(
        default_factory=list
    )
    stream_lengths: list[tuple[Table, int]] = field(default_factory=list)

    @property
    def tables(self) -> frozenset[int]:
        """The tables this log can restore (by id)."""
        return frozenset(id(table) for table, _ in self.stream_lengths)

    @classmethod
    def capture(cls, backend: DynamoDBBackend, transact_items: list[dict[str, Any]]) -> _UndoLog:
        log = cls()
        uncovered: set[str] = set()
        keyed: list[tuple[Table, DynamoType, DynamoType | None]] = []
        for entry in transact_items:
            try:
                (_, op), *_ = entry.items()
                table = backend.tables[op["TableName"]]
                key = op["Item"] if "Item" in op else op["Key"]
                hash_key = DynamoType(key[table.hash_key_attr])
                range_key = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
            except (AttributeError, KeyError, TypeError, ValueError):
                name = _table_name(entry)
                if name is not None:
                    uncovered.add(name)
                continue
            keyed.append((table, hash_key, range_key))
        seen: set[int] = set()
        for table, hash_key, range_key in keyed:
            if table.name in uncovered:
                continue
            try:
                current = table.get_item(hash_key, range_key)
            except Exception:  # moto refuses the operation itself; nothing to log for it
                continue
            log.items.append((table, hash_key, range_key, copy.deepcopy(current)))
            if id(table) not in seen:
                seen.add(id(table))
                shard = table.stream_shard
                log.stream_lengths.append((table, len(shard.items) if shard else 0))
        return log

    def restore(self) -> None:
        for table, hash_key, range_key, item in reversed(self.items):
            if range_key is None:
                # moto types its items as nested dicts; without a range key they are flat.
                items = cast(dict[DynamoType, Item], table.items)
                if item is None:
                    items.pop(hash_key, None)
                else:
                    items[hash_key] = item
            elif item is None:
                table.items.get(hash_key, {}).pop(range_key, None)
                if hash_key in table.items and not table.items[hash_key]:
                    del table.items[hash_key]
            else:
                table.items[hash_key][range_key] = item
        for table, length in self.stream_lengths:
            if table.stream_shard is not None:
                del table.stream_shard.items[length:]


def _table_name(entry: Any) -> str | None:
    try:
        return str(next(iter(entry.values()))["TableName"])
    except (AttributeError, KeyError, StopIteration, TypeError):
        return None
