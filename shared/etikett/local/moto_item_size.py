"""moto's check of an item's size (400 KB) in linear time when an item is written.

moto builds a written item attribute by attribute, and before each one it sums the sizes of
all the attributes so far, nested maps and lists walked through again each time: quadratic in
the item's attributes. A job or an audit entry (a score of attributes, maps inside) spent more
of its write there than anywhere else, with local AWS's request lock held. `install()` builds
the item first and sums its size once: the same limit and the same error, since sizes only add
up. Later changes to an item (UpdateItem) keep moto's own check.
"""

from __future__ import annotations

import threading
from typing import Any

from moto.dynamodb.exceptions import ItemSizeTooLarge
from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
from moto.dynamodb.models.utilities import bytesize

__all__ = ["install"]

# moto's limit (dynamo_type.LimitedSizeDict): between DynamoDB's documented 400 KB and what it
# really takes, 409–410 KB.
MAX_ITEM_SIZE = 405_000
_installed = threading.Lock()
_MARK = "_etikett_item_size"


def install() -> None:
    """Patch moto's DynamoDB items (process-wide, idempotent)."""
    with _installed:
        if getattr(Item.__init__, _MARK, False):
            return

        def build(
            self: Item, hash_key: DynamoType, range_key: DynamoType | None, attrs: dict[str, Any]
        ) -> None:
            self.hash_key = hash_key
            self.range_key = range_key
            values = {key: DynamoType(value) for key, value in attrs.items()}
            if item_size(values) > MAX_ITEM_SIZE:
                raise ItemSizeTooLarge
            self.attrs = LimitedSizeDict()
            dict.update(self.attrs, values)  # checked above, as a whole

        setattr(build, _MARK, True)
        # The patch this module exists for (mypy refuses assignments to methods)
        Item.__init__ = build  # type: ignore[method-assign]


def item_size(values: dict[str, DynamoType]) -> int:
    """An item's size as moto counts it: each attribute's name and value."""
    return sum(bytesize(key) + value.size() for key, value in values.items())
