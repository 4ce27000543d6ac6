"""celpy's parser loaded from lark's tables (etikett_engine.cel.parser_tables): the same trees as
the parser celpy builds from its grammar, no grammar analysis when the tables fit, and a parser
built as before when they do not."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import celpy
import lark
import pytest
from celpy import celparser

from etikett_engine.cel import parser_tables

EXPRESSIONS = [
    "1 + 2 * 3 - -4 / 5 % 6",
    "record.name + ' ' + string(counters.serial)",
    "size(values) > 0 ? values[0] : 'none'",
    "has(record.lot) && record.lot.startsWith('L') || !false",
    "values.filter(v, v > 2).map(v, v * 2).exists(w, w == 8)",
    "{'a': [1, 2u, 3.5e2], 'b': b'\\x00\\xff', 'c': null}.a[1]",
    'r\'raw\\d\' + """three\nlines""" + \'esc\\u00e9\\n\'',
    "pad(string(int(record.count)), 6, '0').matches('^[0-9]+$')",
    "timestamp('2026-11-28T00:00:00Z') + duration('1h') > now",
    "true in [true, false] && 1 != 2.0",
]
TREE = celpy.CompiledRunner.tree_node_class


@pytest.fixture
def fresh_parser() -> Iterator[None]:
    """celpy's one parser per process, set aside for the test and put back after it."""
    kept = celparser.CELParser.CEL_PARSER
    celparser.CELParser.CEL_PARSER = None
    yield
    celparser.CELParser.CEL_PARSER = kept


def parsed(source: str) -> Any:
    tree = celparser.CELParser.CEL_PARSER.parse(source)  # type: ignore[union-attr]
    return tree.pretty(), [(n.meta.line, n.meta.column) for n in tree.iter_subtrees()]


def from_tables(tables: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setattr(parser_tables, "tables_path", lambda: tables)
    celparser.CELParser.CEL_PARSER = None
    parser_tables.install(TREE)
    return [parsed(source) for source in EXPRESSIONS]


def test_the_parser_from_the_tables_parses_as_celpys_own(
    fresh_parser: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    celparser.CELParser(tree_class=TREE)  # celpy's own, from the grammar
    own = [parsed(source) for source in EXPRESSIONS]
    tables = tmp_path / "tables"
    assert from_tables(tables, monkeypatch) == own  # built, and the tables written
    assert tables.stat().st_size > 10_000

    def no_analysis(*_: Any, **__: Any) -> Any:
        raise AssertionError("lark analysed the grammar although the tables fit")

    monkeypatch.setattr(lark.Lark, "_build_parser", no_analysis)
    assert from_tables(tables, monkeypatch) == own  # loaded, not built


@pytest.mark.parametrize("content", [b"", b"not lark's\n", b"0" * 64 + b"\n\x80\x04garbage"])
def test_tables_that_do_not_fit_are_made_again(
    fresh_parser: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    tables = tmp_path / "tables"
    tables.write_bytes(content)
    assert from_tables(tables, monkeypatch)[0][0].startswith("expr")
    assert tables.stat().st_size > 10_000
    assert celparser.Lark is lark.Lark  # celpy's constructor is celpy's again
