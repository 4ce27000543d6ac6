"""Local mode checks an item's size once when it is written (moto_item_size): the same 400 KB
limit and the same refusal as moto's own check, for a put and in a transaction."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models.dynamo_type import DynamoType

from etikett.local.moto_item_size import MAX_ITEM_SIZE, item_size
from support.local_dynamodb import table_client


@pytest.fixture(scope="module")
def ddb() -> Iterator[Any]:
    with table_client("sized", {"pk": "S"}) as client:
        yield client


def item_of(pk: str, size: int) -> dict[str, Any]:
    """An item of exactly `size` bytes as moto counts them, over several attributes."""
    head: dict[str, Any] = {
        "pk": {"S": pk},
        "nested": {"M": {"n": {"N": "12"}, "l": {"L": [{"S": "ab"}, {"BOOL": True}]}}},
    }
    used = item_size({k: DynamoType(v) for k, v in head.items()})
    rest = size - used - len("ab")  # the two names
    return {**head, "a": {"S": "x" * (rest // 2)}, "b": {"S": "y" * (rest - rest // 2)}}


def sizes_as_moto_counts(item: dict[str, Any]) -> int:
    """moto's own sum (LimitedSizeDict.__setitem__): each name, each value's size."""
    return sum(len(key.encode()) + DynamoType(value).size() for key, value in item.items())


@pytest.mark.parametrize("size", [MAX_ITEM_SIZE, MAX_ITEM_SIZE + 1])
def test_an_item_at_the_limit_is_written_and_one_byte_more_is_refused(ddb: Any, size: int) -> None:
    item = item_of(f"item-{size}", size)
    assert sizes_as_moto_counts(item) == size
    key = {"pk": item["pk"]}
    if size <= MAX_ITEM_SIZE:
        ddb.put_item(TableName="sized", Item=item)
        assert ddb.get_item(TableName="sized", Key=key)["Item"] == item
        return
    with pytest.raises(ClientError, match="Item size has exceeded the maximum allowed size"):
        ddb.put_item(TableName="sized", Item=item)
    small = {"pk": {"S": "small"}}
    puts = [{"Put": {"TableName": "sized", "Item": written}} for written in (small, item)]
    with pytest.raises(ClientError, match="size"):
        ddb.transact_write_items(TransactItems=puts)
    assert "Item" not in ddb.get_item(TableName="sized", Key=key)
    assert "Item" not in ddb.get_item(TableName="sized", Key=small)  # nothing written
