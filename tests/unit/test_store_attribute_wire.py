"""The store's DynamoDB client writes attribute values directly (store.attribute_wire): the same
request bytes as botocore's own serializer, for every kind of value and for unusual ones."""

from __future__ import annotations

from typing import Any

import botocore.session
import pytest
from botocore.serialize import JSONSerializer

from etikett.store import attribute_wire, base
from etikett.store.attribute_wire import AttributeValueSerializer

_MODEL = botocore.session.get_session().get_service_model("dynamodb")

EVERY_KIND: dict[str, Any] = {
    "id": {"S": "job_01"},
    "empty": {"S": ""},
    "umlaut": {"S": "Größe ✓"},
    "count": {"N": "12.50"},
    "raw": {"B": b"\x00\xffbytes"},
    "text_as_blob": {"B": "text"},
    "done": {"BOOL": False},
    "nothing": {"NULL": True},
    "names": {"SS": ["a", "b"]},
    "numbers": {"NS": ["1", "2"]},
    "blobs": {"BS": [b"\x01", "zwei"]},
    "payload": {
        "M": {
            "printer": {"M": {"name": {"S": "Line 1"}, "dpi": {"N": "203"}}},
            "serials": {"L": [{"N": "1"}, {"M": {}}, {"L": []}, {"B": b"\x02"}]},
        }
    },
}

UNUSUAL: list[dict[str, Any]] = [
    {"n": {"N": 5}},  # a number, not its text: botocore passes it through as it is
    {"two": {"S": "a", "N": "1"}},  # two members
    {"blob": {"B": bytearray(b"\x03")}},
    {"deep": {"M": {"x": {"SS": ["a", 1]}}}},
    {"none": {"S": None}},
]


def _body(serializer: JSONSerializer, operation: str, parameters: dict[str, Any]) -> bytes:
    request = serializer.serialize_to_request(parameters, _MODEL.operation_model(operation))
    body: bytes = request["body"]
    return body


def _requests(item: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    condition = {
        "ConditionExpression": "#s <> :s",
        "ExpressionAttributeNames": {"#s": "state"},
        "ExpressionAttributeValues": {
            ":s": {"S": "gone"},
            ":m": item.get("payload", {"NULL": True}),
        },
    }
    return [
        ("PutItem", {"TableName": "t", "Item": item, **condition}),
        (
            "TransactWriteItems",
            {
                "TransactItems": [
                    {"Put": {"TableName": "t", "Item": item, **condition}},
                    {"Delete": {"TableName": "t", "Key": {"id": {"S": "x"}}}},
                    {
                        "Update": {
                            "TableName": "t",
                            "Key": {"id": {"S": "y"}},
                            "UpdateExpression": "SET #s = :s",
                            **condition,
                        }
                    },
                ],
                "ClientRequestToken": "token",
            },
        ),
        ("BatchGetItem", {"RequestItems": {"t": {"Keys": [{"id": {"S": "a"}}, item]}}}),
        (
            "Query",
            {
                "TableName": "t",
                "ExclusiveStartKey": item,
                "KeyConditionExpression": "#s = :s",
                "ExpressionAttributeNames": condition["ExpressionAttributeNames"],
                "ExpressionAttributeValues": condition["ExpressionAttributeValues"],
            },
        ),
    ]


@pytest.mark.parametrize("item", [EVERY_KIND, *UNUSUAL], ids=lambda item: next(iter(item)))
def test_requests_are_byte_for_byte_botocores(item: dict[str, Any]) -> None:
    for operation, parameters in _requests(item):
        expected = _body(JSONSerializer(), operation, parameters)
        assert _body(AttributeValueSerializer(), operation, parameters) == expected, operation


def test_the_stores_transactions_use_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    base._connection.cache_clear()
    try:
        client = base._connection("eu-central-1", "http://127.0.0.1:9").client
        assert type(client._serializer) is AttributeValueSerializer
        assert attribute_wire.install(client) is client  # again: left as it is
        assert type(client._serializer) is AttributeValueSerializer
    finally:
        base._connection.cache_clear()
