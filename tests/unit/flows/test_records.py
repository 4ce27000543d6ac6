"""Records from trigger input: CSV rows, JSON elements, JSONL lines, and clear refusals."""

from __future__ import annotations

import pytest

from etikett_engine.flows.records import SourceInvalid, parse


def test_csv_rows_become_records_by_header() -> None:
    content = '\ufeffsscc;name\n00340123450000000017;Müller\n\n00340123450000000024;"A;B"\n'
    assert parse(content.encode(), "csv", ";") == [
        {"sscc": "00340123450000000017", "name": "Müller"},
        {"sscc": "00340123450000000024", "name": "A;B"},
    ]


def test_json_array_object_and_jsonl() -> None:
    assert parse(b'[{"a": 1}, {"a": 2}]', "json") == [{"a": 1}, {"a": 2}]
    assert parse(b'{"a": 1}', "json") == [{"a": 1}]
    assert parse(b'{"a": 1}\n\n{"a": 2}\n', "jsonl") == [{"a": 1}, {"a": 2}]


@pytest.mark.parametrize(
    ("content", "fmt", "message"),
    [
        (b"a,b\n1\n", "csv", "line 2: 1 fields"),
        (b"a,a\n1,2\n", "csv", "unique"),
        (b"[1]", "json", "element 0 is not an object"),
        (b"{", "json", "not JSON"),
        (b'{"a": 1}\nnope\n', "jsonl", "line 2 is not JSON"),
        (b"\xff\xfe", "csv", "not UTF-8"),
    ],
)
def test_malformed_input_names_where(content: bytes, fmt: str, message: str) -> None:
    with pytest.raises(SourceInvalid, match=message):
        parse(content, fmt)  # type: ignore[arg-type]
