"""Local mode writes DynamoDB attribute values straight into moto's responses: every kind of
value, nested or not, comes back from every reading operation exactly as it was written."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest

from etikett.local import moto_attribute_values
from etikett.local.moto_attribute_values import moto_form, wire_form
from support.local_dynamodb import table_client

ITEM: dict[str, Any] = {
    "pk": {"S": "item-1"},
    "text": {"S": "Grüße ✓"},
    "empty": {"S": ""},
    "number": {"N": "-12.50"},
    "binary": {"B": b"\x00\xffbytes"},
    "flag": {"BOOL": False},
    "nothing": {"NULL": True},
    "strings": {"SS": ["a", "b"]},
    "numbers": {"NS": ["1", "2.5"]},
    "blobs": {"BS": [b"\x01", b"\x02\x03"]},
    "nested": {
        "M": {
            "list": {"L": [{"S": "x"}, {"N": "1"}, {"B": b"\x10"}, {"M": {}}, {"L": []}]},
            "deeper": {"M": {"flag": {"BOOL": True}, "blobs": {"BS": [b"\x04"]}}},
        }
    },
}


@pytest.fixture(scope="module")
def ddb() -> Iterator[Any]:
    with table_client("values", {"pk": "S"}) as client:
        client.put_item(TableName="values", Item=ITEM)
        yield client


def normalised(item: dict[str, Any]) -> dict[str, Any]:
    """Sets compare without order."""

    def value(v: dict[str, Any]) -> Any:
        ((kind, inner),) = v.items()
        if kind in ("SS", "NS", "BS"):
            return kind, sorted(inner)
        if kind == "M":
            return kind, {k: value(x) for k, x in inner.items()}
        if kind == "L":
            return kind, [value(x) for x in inner]
        return kind, inner

    return {k: value(v) for k, v in item.items()}


def test_every_kind_of_value_reads_back_as_written(ddb: Any) -> None:
    key = {"pk": {"S": "item-1"}}
    expected = normalised(ITEM)
    assert normalised(ddb.get_item(TableName="values", Key=key)["Item"]) == expected
    queried = ddb.query(
        TableName="values",
        KeyConditionExpression="pk = :pk",
        ExpressionAttributeValues={":pk": {"S": "item-1"}},
    )["Items"]
    assert [normalised(i) for i in queried] == [expected]
    both = ddb.transact_get_items(TransactItems=[{"Get": {"TableName": "values", "Key": key}}])
    assert normalised(both["Responses"][0]["Item"]) == expected
    updated = ddb.update_item(
        TableName="values",
        Key=key,
        UpdateExpression="SET #n = :n",
        ExpressionAttributeNames={"#n": "number"},
        ExpressionAttributeValues={":n": {"N": "3"}},
        ReturnValues="ALL_NEW",
    )["Attributes"]
    assert normalised(updated) == {**expected, "number": ("N", "3")}


def test_values_not_in_wire_form_are_left_to_moto() -> None:
    from moto.dynamodb.models.dynamo_type import DynamoType

    for unusual in ({"S": "a", "N": "1"}, {"X": "1"}, {"M": []}, {"B": 5}, DynamoType({"S": "a"})):
        with pytest.raises(moto_attribute_values.Unusual):
            wire_form(unusual)
    assert wire_form({"B": b"\xff"}) == {"B": "/w=="}


def test_a_request_s_values_parse_as_moto_s_own_parser_makes_them() -> None:
    from botocore.session import Session
    from moto.core.parse import JSONParser

    moto_attribute_values.install()
    model = Session().get_service_model("dynamodb").operation_model("PutItem")
    body = json.dumps({"TableName": "values", "Item": wire_item(ITEM)}).encode()
    request: Any = {"body": body, "headers": {}, "method": "POST", "url_path": "/"}
    parsed = JSONParser(model).parse(request)
    # A blob parser of its own (the same decoding) keeps a parser on moto's generic path.
    generic = JSONParser(model, blob_parser=lambda v: base64.b64decode(v)).parse(request)
    assert parsed == generic
    assert parsed["Item"]["binary"] == {"B": b"\x00\xffbytes"}
    assert moto_form({"BS": ["AQ=="]}) == {"BS": [b"\x01"]}
    for unusual in ({"S": "a", "N": "1"}, {"X": "1"}, {"M": []}, {"B": 5}, {"S": 5}, []):
        with pytest.raises(moto_attribute_values.Unusual):
            moto_form(unusual)


def test_values_written_in_a_transaction_read_back_as_written(ddb: Any) -> None:
    item = {**ITEM, "pk": {"S": "item-2"}}
    ddb.transact_write_items(
        TransactItems=[
            {
                "Put": {
                    "TableName": "values",
                    "Item": item,
                    "ConditionExpression": "attribute_not_exists(pk) AND #f = :f OR :t = :t",
                    "ExpressionAttributeNames": {"#f": "flag"},
                    "ExpressionAttributeValues": {":f": {"BOOL": False}, ":t": {"B": b"\x01"}},
                }
            }
        ]
    )
    read = ddb.get_item(TableName="values", Key={"pk": {"S": "item-2"}})["Item"]
    assert normalised(read) == normalised(item)


def wire_item(item: dict[str, Any]) -> dict[str, Any]:
    """An item as the SDK sends it: binary in base64."""

    def value(v: dict[str, Any]) -> dict[str, Any]:
        ((kind, inner),) = v.items()
        if kind == "B":
            return {kind: base64.b64encode(inner).decode()}
        if kind == "BS":
            return {kind: [base64.b64encode(b).decode() for b in inner]}
        if kind == "M":
            return {kind: {k: value(x) for k, x in inner.items()}}
        if kind == "L":
            return {kind: [value(x) for x in inner]}
        return v

    return {k: value(v) for k, v in item.items()}
