"""JSON Patch is bounded while it runs: the number of operations, and the document's size after
each operation, so a `copy` that doubles the document is stopped at the operation that crosses
the limit, not after gigabytes were built."""

from __future__ import annotations

import copy
import tracemalloc
from typing import Any

import pytest

from etikett.domain import documents
from etikett_engine.errors import PatchFailed, PayloadTooLarge, ProblemCode

SEED = "x" * 65_536


def _doubling(count: int) -> list[dict[str, Any]]:
    """Each operation appends the list to itself: its size doubles per operation."""
    return [{"op": "copy", "from": "/grow", "path": "/grow/-"} for _ in range(count)]


def test_a_copy_that_outgrows_the_limit_is_stopped_at_that_operation() -> None:
    document = {"grow": [SEED]}
    with pytest.raises(PayloadTooLarge) as raised:
        documents.apply_patch(document, _doubling(9))  # 64 KiB * 2**9 = 32 MiB
    error = raised.value
    assert error.code is ProblemCode.DOCUMENT_TOO_LARGE and error.status == 413
    # After operation i the list holds 2**(i + 1) copies of 64 KiB: 128 of them (index 6) pass
    # 8 MB, so that operation is refused.
    assert error.params["index"] == 6
    assert error.params["limit"] == documents.MAX_PATCHED_DOCUMENT_CHARS
    assert document == {"grow": [SEED]}  # the original is untouched


def test_doubling_forty_times_fails_small() -> None:
    """2**40 copies of 64 KiB would be 64 PiB: refused long before, in bounded memory."""
    tracemalloc.start()
    try:
        with pytest.raises(PayloadTooLarge):
            documents.apply_patch({"grow": [SEED]}, _doubling(40))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024 * 1024, f"peak {peak / 1e6:.0f} MB"


def test_growth_by_added_values_counts_too() -> None:
    big = "y" * 1_000_000
    operations = [{"op": "add", "path": f"/v{i}", "value": big} for i in range(9)]
    with pytest.raises(PayloadTooLarge) as raised:
        documents.apply_patch({}, operations)
    assert raised.value.params["index"] == 7


def test_removing_makes_room_again() -> None:
    """Size is the document's, not the patch's: add, remove, add stays small."""
    big = "z" * 3_000_000
    operations: list[dict[str, Any]] = []
    for _ in range(10):
        operations += [
            {"op": "add", "path": "/big", "value": big},
            {"op": "remove", "path": "/big"},
        ]
    assert documents.apply_patch({"a": 1}, operations) == {"a": 1}
    replaced = [{"op": "replace", "path": "/a", "value": big} for _ in range(10)]
    assert documents.apply_patch({"a": 1}, replaced) == {"a": big}


def test_too_many_operations_are_refused_before_any_runs() -> None:
    operations = [{"op": "add", "path": "/n", "value": i} for i in range(1001)]
    with pytest.raises(PatchFailed) as raised:
        documents.apply_patch({}, operations)
    assert raised.value.params["reason"] == "too_many_operations"
    assert raised.value.params["limit"] == documents.MAX_PATCH_OPERATIONS == 1000
    assert documents.apply_patch({}, operations[:1000]) == {"n": 999}


def test_the_operations_are_not_changed_by_applying_them() -> None:
    """Copilot proposals keep their operations beside the document they give."""
    operations = [
        {"op": "add", "path": "/objects/-", "value": {"id": "a", "tags": []}},
        {"op": "add", "path": "/objects/0/tags/-", "value": "t"},
    ]
    before = copy.deepcopy(operations)
    document = {"objects": []}
    changed = documents.apply_patch(document, operations, id_collection="objects")
    assert changed == {"objects": [{"id": "a", "tags": ["t"]}]}
    assert operations == before and document == {"objects": []}
