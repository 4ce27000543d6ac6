"""A record's item, and the transaction's put of it, in DynamoDB's wire form without building its
pynamodb model: the same attribute values, in the same order, as `model(**values).serialize()`
and pynamodb's put would send (tests/unit/test_store_wire_items.py), for items written in bulk;
and back, an item's values as `model.from_raw_data(item)` holds them (a stream's records).

Building a model (its attribute descriptors, defaults, then `serialize` reading each one back)
cost more than serializing its values: a quarter of the service's time in a sync of offline
prints. Each value still goes through its attribute's own `serialize`.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Mapping
from typing import Any

from pynamodb.attributes import (
    Attribute,
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.exceptions import AttributeNullError, PutError
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

__all__ = ["BATCH_MOST", "WireCondition", "batch_put", "item", "prepared", "put", "values"]

# Attribute classes whose value is stored as given (their descriptors change nothing on the
# way in); a model with any other is refused, not served something that could differ.
_PLAIN = (
    UnicodeAttribute,
    NumberAttribute,
    UTCDateTimeAttribute,
    BooleanAttribute,
    JSONAttribute,
    ListAttribute,
)
_NO_DEFAULT = object()
# The most puts one BatchWriteItem takes.
BATCH_MOST = 25


class WireCondition(dict[str, Any]):
    """A condition as a put's request carries it (`prepared`): serialized once, for a
    condition every put of a kind repeats."""


class _Shape:
    """What serializing an item of one model needs, worked out once per model."""

    def __init__(self, model: type[Model]) -> None:
        self.attributes: list[tuple[str, Attribute[Any], Any]] = []
        # A stored item read back gets `default`, a new one `default_for_new` first.
        self.read_defaults: list[Any] = []
        for name, attribute in model.get_attributes().items():
            raw_map = type(attribute) is MapAttribute
            if not raw_map and type(attribute) not in _PLAIN:
                raise TypeError(
                    f"{model.__name__}.{name}: {type(attribute).__name__} not supported"
                )
            default = attribute.default_for_new
            if default is None:
                default = attribute.default
            self.attributes.append((name, attribute, _NO_DEFAULT if default is None else default))
            self.read_defaults.append(attribute.default)
        self.names = frozenset(name for name, _, _ in self.attributes)
        self.hash_key = model._hash_key_attribute().attr_name
        range_key = model._range_key_attribute()
        self.range_key = range_key.attr_name if range_key is not None else None


@functools.cache
def _shape(model: type[Model]) -> _Shape:
    return _Shape(model)


def item(model: type[Model], values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The attribute values of `model(**values)` as its `serialize()` gives them."""
    shape = _shape(model)
    unknown = values.keys() - shape.names
    if unknown:
        raise ValueError(f"{model.__name__} has no attribute {sorted(unknown)[0]!r}")
    serialized: dict[str, dict[str, Any]] = {}
    for name, attribute, default in shape.attributes:
        value = values.get(name, _NO_DEFAULT)
        if value is _NO_DEFAULT:
            value = None if default is _NO_DEFAULT else default() if callable(default) else default
        if value is None:
            if not attribute.null:
                raise AttributeNullError(name)
            continue
        if isinstance(attribute, (ListAttribute, MapAttribute)):
            stored = attribute.serialize(value, null_check=True)
        else:
            stored = attribute.serialize(value)
        if stored is not None:
            serialized[attribute.attr_name] = {attribute.attr_type: stored}
    return serialized


def prepared(of: Condition) -> WireCondition:
    """`of` as pynamodb writes it into a request: the expression, its names, its values."""
    names: dict[str, str] = {}
    values: dict[str, Any] = {}
    serialized = WireCondition(ConditionExpression=of.serialize(names, values))
    if names:
        serialized["ExpressionAttributeNames"] = {v: k for k, v in names.items()}
    if values:
        serialized["ExpressionAttributeValues"] = values
    return serialized


def values(model: type[Model], stored: Mapping[str, Any]) -> dict[str, Any]:
    """The attribute values `model.from_raw_data(stored)` holds, by attribute name; a raw map's
    as a dict (the model holds a MapAttribute of it)."""
    read: dict[str, Any] = {}
    shape = _shape(model)
    for (name, attribute, _), default in zip(shape.attributes, shape.read_defaults, strict=True):
        value = stored.get(attribute.attr_name)
        if value and "NULL" not in value:
            read[name] = attribute.deserialize(attribute.get_value(value))
        else:
            read[name] = default() if callable(default) else default
    return read


def put(
    model: type[Model],
    values: Mapping[str, Any],
    condition: Condition | WireCondition | None = None,
) -> dict[str, Any]:
    """The transaction's put of `model(**values)` on `condition`, as pynamodb's
    `get_save_kwargs_from_instance` makes it: the table, the item with its keys first, then
    the condition with its names and values."""
    shape = _shape(model)
    attributes = item(model, values)
    stored = {shape.hash_key: attributes.pop(shape.hash_key)}
    if shape.range_key is not None:
        stored[shape.range_key] = attributes.pop(shape.range_key)
    stored.update(attributes)
    # The table's name is read each time: tests and local mode re-aim the models (base.bind).
    request: dict[str, Any] = {"TableName": model.Meta.table_name, "Item": stored}
    if condition is not None:
        if isinstance(condition, WireCondition):
            # Its names and values copied: no request shares a dict another could change.
            request.update({key: _copied(value) for key, value in condition.items()})
        else:
            request.update(prepared(condition))
    return request


def _copied(value: Any) -> Any:
    return dict(value) if isinstance(value, dict) else value


# DynamoDB leaves puts unprocessed when a partition is throttled, and sending them again at
# once meets the same throttle. Before each resend a pause drawn over a window that doubles
# ("full jitter", AWS's advice for BatchWriteItem): up to 50 ms, 100 ms, … at most 1 s, so that
# many writers throttled together do not come back together.
RESEND_WINDOW_FIRST = 0.05
RESEND_WINDOW_MOST = 1.0


def resend_pause(resend: int) -> float:
    """Seconds to wait before the `resend`-th resend (1, 2, …) of unprocessed puts."""
    window = min(RESEND_WINDOW_MOST, RESEND_WINDOW_FIRST * 2 ** (resend - 1))
    return random.uniform(0, window)


def batch_put(model: type[Model], items: list[dict[str, dict[str, Any]]]) -> None:
    """Up to 25 items of `model` (as `item` makes them) in one BatchWriteItem, as
    `model.batch_write()` sends its models' items. What DynamoDB leaves unprocessed is sent
    again after a pause (`resend_pause`): the model's retry attempts in all, then `PutError`."""
    if len(items) > BATCH_MOST:
        raise ValueError(f"a BatchWriteItem takes {BATCH_MOST} puts at most, not {len(items)}")
    connection = model._get_connection()
    attempts = model.Meta.max_retry_attempts
    for attempt in range(attempts):
        if not items:
            return
        if attempt:
            time.sleep(resend_pause(attempt))
        answer = connection.batch_write_item(put_items=items)
        left = (answer or {}).get("UnprocessedItems", {}).get(model.Meta.table_name, [])
        items = [request["PutRequest"]["Item"] for request in left]
    if items:
        raise PutError(f"{len(items)} put(s) left unprocessed after {attempts} attempts")
