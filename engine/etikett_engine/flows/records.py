"""Records from what a trigger receives: a CSV row, a JSON array element or object, a JSONL line."""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Literal, cast, get_args

MAX_RECORDS = 100_000

RecordFormat = Literal["csv", "json", "jsonl"]


class SourceInvalid(ValueError):
    """The content cannot be read as records in its format; the message names where."""


def record_format(name: str) -> RecordFormat:
    """`name` as a format of records; SourceInvalid if it names none."""
    for fmt in get_args(RecordFormat):
        if fmt == name:
            return cast(RecordFormat, fmt)
    raise SourceInvalid(f"{name!r} is not a format of records (csv, json, jsonl)")


def parse(content: bytes, fmt: RecordFormat, delimiter: str = ",") -> list[dict[str, Any]]:
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise SourceInvalid(f"not UTF-8 text (byte {error.start})") from None
    if fmt == "csv":
        return _csv(text, delimiter)
    if fmt == "json":
        try:
            value = json.loads(text)
        except json.JSONDecodeError as error:
            raise SourceInvalid(f"not JSON: {error.msg} (line {error.lineno})") from None
        items = value if isinstance(value, list) else [value]
        for index, item in enumerate(items):
            if not isinstance(item, dict):
                raise SourceInvalid(f"element {index} is not an object")
        return _bounded(items)
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as error:
            raise SourceInvalid(f"line {number} is not JSON: {error.msg}") from None
        if not isinstance(item, dict):
            raise SourceInvalid(f"line {number} is not an object")
        records.append(item)
    return _bounded(records)


def _csv(text: str, delimiter: str) -> list[dict[str, Any]]:
    reader = csv.reader(io.StringIO(text), delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration:
        return []
    except csv.Error as error:
        raise SourceInvalid(f"line 1: {error}") from None
    names = [name.strip() for name in header]
    if len(set(names)) != len(names) or "" in names:
        raise SourceInvalid("line 1: the field names must be unique and not empty")
    records = []
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue
            if len(row) != len(names):
                raise SourceInvalid(
                    f"line {reader.line_num}: {len(row)} fields, the header has {len(names)}"
                )
            records.append(dict(zip(names, row, strict=True)))
    except csv.Error as error:
        raise SourceInvalid(f"line {reader.line_num}: {error}") from None
    return _bounded(records)


def _bounded(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    if len(records) > MAX_RECORDS:
        raise SourceInvalid(f"{len(records)} records; at most {MAX_RECORDS} per event")
    return records
