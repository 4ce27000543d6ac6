"""DynamoDB attribute values written into a request's JSON as they are, not member by member.

botocore's JSON serializer walks every attribute value of every item through the service model
(each value a structure of ten possible members), though pynamodb hands them over in DynamoDB's
wire form already, binary aside: for a transaction of a hundred items (a sync of offline prints)
that walk was a third of the service's time. `AttributeValueSerializer` writes such values
directly, binary base64-encoded as botocore does, and leaves anything unusual to botocore: the
same request bytes either way (tests/unit/test_store_attribute_wire.py).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from botocore.serialize import JSONSerializer

__all__ = ["AttributeValueSerializer", "Unusual", "converted", "install"]

_SHAPE = "AttributeValue"
_PLAIN = frozenset({"S", "N"})
_FLAGS = frozenset({"BOOL", "NULL"})
_STRING_SETS = frozenset({"SS", "NS"})
# botocore's own walks (its type stubs do not declare them).
_generic_map: Any = vars(JSONSerializer)["_serialize_type_map"]
_generic_structure: Any = vars(JSONSerializer)["_serialize_type_structure"]


class Unusual(Exception):
    """Not plainly in wire form: botocore's own walk decides."""


class AttributeValueSerializer(JSONSerializer):
    """botocore's JSON serializer with a direct path for attribute values and maps of them."""

    def _serialize_type_map(self, serialized: Any, value: Any, shape: Any, key: Any) -> None:
        if shape.value.name == _SHAPE and type(value) is dict:
            try:
                serialized[key] = {name: _wire(item) for name, item in value.items()}
                return
            except Unusual:
                pass
        _generic_map(self, serialized, value, shape, key)

    def _serialize_type_structure(self, serialized: Any, value: Any, shape: Any, key: Any) -> None:
        if key is not None and shape.name == _SHAPE:
            try:
                serialized[key] = _wire(value)
                return
            except Unusual:
                pass
        _generic_structure(self, serialized, value, shape, key)


def install(client: Any) -> Any:
    """`client` (a botocore DynamoDB client without parameter validation, as pynamodb makes
    them) with this serializer; a client with any other serializer is left as it is."""
    current = getattr(client, "_serializer", None)
    if type(current) is JSONSerializer:
        precision = getattr(current, "_timestamp_precision", None)
        serializer = (
            AttributeValueSerializer(timestamp_precision=precision)
            if precision is not None
            else AttributeValueSerializer()
        )
        client._serializer = serializer
    return client


def _wire(value: Any) -> dict[str, Any]:
    """One attribute value as botocore would write it (raises Unusual if not plainly one)."""
    return converted(value, _base64)


def converted(value: Any, binary: Callable[[Any], Any]) -> dict[str, Any]:
    """`value`, one attribute value in DynamoDB's JSON form, checked to be plainly one and
    copied, each binary through `binary` (raises Unusual otherwise). Local AWS reads requests
    with it too, binary decoded (`local/moto_attribute_values.py`)."""
    if type(value) is not dict or len(value) != 1:
        raise Unusual
    ((kind, inner),) = value.items()
    if kind in _PLAIN:
        if type(inner) is not str:
            raise Unusual
        return {kind: inner}
    if kind in _FLAGS:
        if type(inner) is not bool:
            raise Unusual
        return {kind: inner}
    if kind == "M":
        if type(inner) is not dict:
            raise Unusual
        return {"M": {name: converted(item, binary) for name, item in inner.items()}}
    if kind == "L":
        if type(inner) is not list:
            raise Unusual
        return {"L": [converted(item, binary) for item in inner]}
    if kind in _STRING_SETS:
        if type(inner) is not list or not all(type(item) is str for item in inner):
            raise Unusual
        return {kind: list(inner)}
    if kind == "B":
        return {"B": binary(inner)}
    if kind == "BS":
        if type(inner) is not list:
            raise Unusual
        return {"BS": [binary(item) for item in inner]}
    raise Unusual


def _base64(value: Any) -> str:
    """As botocore's blob: bytes, or text taken as UTF-8."""
    if type(value) is str:
        value = value.encode("utf-8")
    elif type(value) is not bytes:
        raise Unusual
    return base64.b64encode(value).strip().decode("utf-8")
