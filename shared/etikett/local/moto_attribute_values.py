"""DynamoDB attribute values in moto's requests and responses without the generic shape walk.

moto 5 parses every request and serializes every response through botocore's model, member by
member: each attribute value of each item is a structure of ten possible members, each looked
up under several aliases. Most of a GetItem, Query or TransactGetItems answer's time goes
there, and a good part of a TransactWriteItems of a hundred items, and local mode handles each
request with a lock held. The values are in DynamoDB's wire form (`{"S": …}`, `{"M": {…}}`),
moto's own form differing only in binary (bytes, not base64), so `install()` converts such
values directly, as the generic paths do; anything else takes the generic path.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Callable
from typing import Any

from moto.core import parse, serialize

from etikett.store.attribute_wire import Unusual, converted

__all__ = ["install"]

_SHAPE = "AttributeValue"
_PLAIN = frozenset({"S", "N", "BOOL", "NULL"})
_PLAIN_SETS = frozenset({"SS", "NS"})
_BLOB: Callable[[str], bytes] = parse.default_blob_parser  # moto's, untyped
_installed = threading.Lock()
_MARK = "_etikett_attribute_values"


def install() -> None:
    """Patch moto's JSON serializer (process-wide, idempotent)."""
    with _installed:
        cls = serialize.BaseJSONSerializer
        generic = cls._serialize_type_structure
        if getattr(generic, _MARK, False):
            return

        def serialize_structure(
            self: Any, serialized: Any, value: Any, shape: Any, key: str
        ) -> None:
            if shape.name == _SHAPE and key:
                try:
                    serialized[self.get_serialized_name(shape, key)] = wire_form(value)
                    return
                except Unusual:
                    pass
            generic(self, serialized, value, shape, key)

        setattr(serialize_structure, _MARK, True)
        # The patch this module exists for (mypy refuses assignments to methods)
        cls._serialize_type_structure = serialize_structure  # type: ignore[method-assign]

        parser = parse.BaseJSONParser
        generic_parse: Callable[..., Any] = parser._parse_structure

        def parse_structure(self: Any, shape: Any, value: Any) -> Any:
            if shape.name == _SHAPE and self._blob_parser is _BLOB and self.MAP_TYPE is dict:
                try:
                    return moto_form(value)
                except Unusual:
                    pass
            return generic_parse(self, shape, value)

        # (mypy refuses assignments to methods)
        parser._parse_structure = parse_structure  # type: ignore[method-assign]


def wire_form(value: Any) -> dict[str, Any]:
    """`value` (one attribute value as moto holds it) as DynamoDB's JSON has it."""
    if type(value) is not dict or len(value) != 1:
        raise Unusual
    ((kind, inner),) = value.items()
    if kind in _PLAIN:
        if inner is None or isinstance(inner, dict | list):
            raise Unusual
        return {kind: inner}
    if kind in _PLAIN_SETS:
        if type(inner) is not list or not all(type(v) is str for v in inner):
            raise Unusual
        return {kind: list(inner)}
    if kind == "M":
        if type(inner) is not dict:
            raise Unusual
        return {"M": {str(k): wire_form(v) for k, v in inner.items()}}
    if kind == "L":
        if type(inner) is not list:
            raise Unusual
        return {"L": [wire_form(v) for v in inner]}
    if kind == "B":
        return {"B": _base64(inner)}
    if kind == "BS":
        if type(inner) is not list:
            raise Unusual
        return {"BS": [_base64(v) for v in inner]}
    raise Unusual


def moto_form(value: Any) -> dict[str, Any]:
    """`value` (one attribute value of a request, as DynamoDB's JSON has it) as moto's request
    parser makes it: the same, binary decoded from base64."""
    return converted(value, _unbase64)


def _unbase64(value: Any) -> bytes:
    if type(value) is not str:
        raise Unusual
    return _BLOB(value)


def _base64(value: Any) -> str:
    if not isinstance(value, bytes | str):
        raise Unusual
    raw = value.encode("utf-8") if isinstance(value, str) else value
    return base64.b64encode(raw).decode("ascii")
