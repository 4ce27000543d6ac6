"""Cursors: only cursors we issued for the same index are accepted."""

from __future__ import annotations

import pytest

from etikett.store.pages import InvalidCursor, decode_cursor, encode_cursor

KEY = {"pk": {"S": "usr_1"}, "kind": {"S": "user"}, "username_key": {"S": "anna"}}


def test_a_cursor_round_trips() -> None:
    cursor = encode_cursor(KEY)
    assert cursor is not None and "=" not in cursor
    assert decode_cursor(cursor, KEY.keys()) == KEY


def test_no_last_key_means_no_cursor() -> None:
    assert encode_cursor(None) is None and encode_cursor({}) is None
    assert decode_cursor(None, KEY.keys()) is None


@pytest.mark.parametrize(
    "cursor",
    [
        "%%%",
        "bm90IGpzb24",
        "W10",
        "eyJ4Ijp7IlMiOiIxIn19",
        "eyJwayI6IHsiQiI6ICJ4In19",
        "eyJwayI6IDF9",
    ],
)
def test_foreign_or_broken_cursors_are_refused(cursor: str) -> None:
    with pytest.raises(InvalidCursor) as refused:
        decode_cursor(cursor, KEY.keys())
    assert refused.value.code == "request.invalid_cursor" and refused.value.status == 400
