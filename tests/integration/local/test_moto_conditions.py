"""Local mode parses each condition and filter expression once (moto_conditions) and answers as
moto does: a condition that holds writes, one that fails refuses, in a put and in a transaction,
filters keep the same items, and what moto checks about unused names it still checks, every
time the same expression comes again."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from etikett.local import moto_conditions
from support.local_dynamodb import table_client

TABLE = "conditioned"


@pytest.fixture(scope="module")
def ddb() -> Iterator[Any]:
    with table_client(TABLE, {"pk": "S", "sk": "N"}) as client:
        yield client


def _absent(pk: str, sk: int) -> dict[str, Any]:
    return {
        "TableName": TABLE,
        "Item": {"pk": {"S": pk}, "sk": {"N": str(sk)}, "state": {"S": "new"}},
        "ConditionExpression": "attribute_not_exists(#0)",
        "ExpressionAttributeNames": {"#0": "pk"},
    }


def test_a_condition_parsed_once_decides_each_write_by_its_own_item(ddb: Any) -> None:
    ddb.put_item(**_absent("once", 1))
    parsed = moto_conditions.parsed_count()
    for sk in (2, 3):
        ddb.put_item(**_absent("once", sk))  # the same text again: not parsed again
    with pytest.raises(ClientError) as refused:
        ddb.put_item(**_absent("once", 2))  # exists now
    assert refused.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert moto_conditions.parsed_count() == parsed
    transaction = [{"Put": _absent("once", 4)}, {"Put": _absent("once", 1)}]
    with pytest.raises(ClientError) as cancelled:
        ddb.transact_write_items(TransactItems=transaction)
    reasons = cancelled.value.response["CancellationReasons"]
    assert [reason["Code"] for reason in reasons] == ["None", "ConditionalCheckFailed"]
    assert "Item" not in ddb.get_item(TableName=TABLE, Key={"pk": {"S": "once"}, "sk": {"N": "4"}})
    ddb.transact_write_items(TransactItems=[{"Put": _absent("once", 4)}])
    assert moto_conditions.parsed_count() == parsed


def test_values_are_part_of_the_expression(ddb: Any) -> None:
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "v"}, "sk": {"N": "1"}, "n": {"N": "5"}})

    def put_if_below(limit: int) -> bool:
        try:
            ddb.put_item(
                TableName=TABLE,
                Item={"pk": {"S": "v"}, "sk": {"N": "1"}, "n": {"N": "5"}},
                ConditionExpression="#n < :limit",
                ExpressionAttributeNames={"#n": "n"},
                ExpressionAttributeValues={":limit": {"N": str(limit)}},
            )
        except ClientError as error:
            assert error.response["Error"]["Code"] == "ConditionalCheckFailedException"
            return False
        return True

    assert [put_if_below(limit) for limit in (9, 3, 9, 3)] == [True, False, True, False]


def test_filters_and_projections_answer_alike_every_time(ddb: Any) -> None:
    for sk in range(6):
        item = {"pk": {"S": "f"}, "sk": {"N": str(sk)}, "odd": {"BOOL": sk % 2 == 1}}
        ddb.put_item(TableName=TABLE, Item=item)
    query = {
        "TableName": TABLE,
        "KeyConditionExpression": "pk = :pk",
        "FilterExpression": "#odd = :yes",
        "ProjectionExpression": "sk, #odd",
        "ExpressionAttributeNames": {"#odd": "odd"},
        "ExpressionAttributeValues": {":pk": {"S": "f"}, ":yes": {"BOOL": True}},
    }
    answers = [ddb.query(**query)["Items"] for _ in range(3)]
    assert [[item["sk"]["N"] for item in items] for items in answers] == [["1", "3", "5"]] * 3
    unused = {**query, "ExpressionAttributeNames": {"#odd": "odd", "#spare": "spare"}}
    for _ in range(2):  # moto refuses a name the expressions do not use, each time
        with pytest.raises(ClientError, match="unused"):
            ddb.query(**unused)


def test_a_condition_with_an_unused_name_is_refused_each_time(ddb: Any) -> None:
    """moto checks the names a condition uses against those given, from what its parse found:
    a parse handed out again must find them again."""
    ddb.put_item(**_absent("names", 1))
    spare = {**_absent("names", 2), "ExpressionAttributeNames": {"#0": "pk", "#spare": "x"}}
    for _ in range(2):
        with pytest.raises(ClientError, match="unused") as refused:
            ddb.put_item(**spare)
        assert refused.value.response["Error"]["Code"] == "ValidationException"
        with pytest.raises(ClientError, match="unused"):
            ddb.transact_write_items(TransactItems=[{"Put": spare}])
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": "names"}, "sk": {"N": "2"}})
    assert "Item" not in item
