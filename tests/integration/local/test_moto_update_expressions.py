"""Local mode parses each update expression once and skips moto's per-call overheads
(moto_update_expressions) and answers as moto does: the same items after every update, the same
refusals every time the same expression comes again, in an UpdateItem and in a transaction."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.models.table import Table
from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser, Node  # type: ignore[attr-defined]
from moto.dynamodb.parsing.executors import UpdateExpressionExecutor
from moto.dynamodb.parsing.validators import UpdateExpressionValidator

from etikett.local import moto_update_expressions
from support.local_dynamodb import table_client

TABLE = "updated"

# (expression, names, values, the item's attributes before): what a service sends, and what moto
# refuses: a key updated, overlapping paths, an attribute that is not there, a type mismatch.
CASES: list[tuple[str, dict[str, str], dict[str, Any], dict[str, Any]]] = [
    (
        "SET #0 = :0, #1 = if_not_exists(#1, :1), #2 = #2 + :2 REMOVE #3",
        {"#0": "status", "#1": "created", "#2": "count", "#3": "lease"},
        {":0": {"S": "sent"}, ":1": {"N": "7"}, ":2": {"N": "1"}},
        {"count": {"N": "4"}, "lease": {"S": "x"}},
    ),
    (
        "SET #l = list_append(#l, :v), #m.#k = :s ADD #n :one",
        {"#l": "log", "#m": "map", "#k": "key", "#n": "n"},
        {":v": {"L": [{"S": "b"}]}, ":s": {"S": "deep"}, ":one": {"N": "1"}},
        {"log": {"L": [{"S": "a"}]}, "map": {"M": {}}},
    ),
    ("SET #0 = :0", {"#0": "pk"}, {":0": {"S": "other"}}, {}),
    ("SET #a = :x, #a = :y", {"#a": "a"}, {":x": {"S": "1"}, ":y": {"S": "2"}}, {}),
    ("SET a.b = :x, a = :y", {}, {":x": {"S": "1"}, ":y": {"M": {}}}, {"a": {"M": {}}}),
    ("SET #c = #c + :one", {"#c": "count"}, {":one": {"N": "1"}}, {}),
    ("SET #c = #c + :one", {"#c": "count"}, {":one": {"N": "1"}}, {"count": {"S": "text"}}),
    ("SET #c = :v", {"#c": "count"}, {":w": {"N": "1"}}, {}),
]


def dump(value: Any) -> Any:
    """A tree, an item or a value as plain data (a node's parent left out: it points up)."""
    if isinstance(value, Node):
        fields = {k: dump(v) for k, v in vars(value).items() if k != "parent"}
        return (type(value).__name__, fields)
    if isinstance(value, DynamoType):
        return ("DynamoType", value.type, dump(value.value))
    if isinstance(value, Item):
        return dump(value.to_json())
    if isinstance(value, dict):
        return {k: dump(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [dump(v) for v in value]
    return value


def _table() -> Table:
    return Table(  # type: ignore[abstract]
        "t",
        account_id="123456789012",
        region="eu-central-1",
        schema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        attr=[{"AttributeName": "pk", "AttributeType": "S"}],
    )


def _apply(validator_class: type, case: tuple[str, dict[str, str], dict[str, Any], Any]) -> Any:
    """moto's UpdateItem steps after the parse: validate, normalise, execute; the item after, or
    the refusal."""
    expression, names, values, attributes = case
    tree = moto_update_expressions._RememberingParser.make(expression)
    item = Item(DynamoType({"S": "k"}), None, attrs={"pk": {"S": "k"}, **attributes})
    try:
        validated = validator_class(
            tree,
            expression_attribute_names=names,
            expression_attribute_values=values,
            item=item,
            table=_table(),
        ).validate()
        validated.normalize()
        UpdateExpressionExecutor(validated, item, names).execute()
    except Exception as error:  # the refusal is the answer compared
        return ("refused", type(error).__name__, str(error))
    return ("applied", dump(item))


def test_moto_and_local_mode_answer_alike_every_time(monkeypatch: pytest.MonkeyPatch) -> None:
    moto_update_expressions.install()
    patched = [
        [_apply(moto_update_expressions._RememberingValidator, case) for case in CASES]
        for _ in range(2)
    ]
    with monkeypatch.context() as moto:
        for name, original in moto_update_expressions.ORIGINAL.items():
            moto.setattr(DepthFirstTraverser, name, original)
        own = [_apply(UpdateExpressionValidator, case) for case in CASES]
    assert patched == [own, own]  # the second time: the kept tree, the checks skipped
    assert [answer[0] for answer in own] == ["applied"] * 2 + ["refused"] * 6


def test_the_copy_of_a_kept_tree_is_moto_s_deep_copy() -> None:
    for expression, *_ in CASES:
        tree = moto_update_expressions._RememberingParser.make(expression)
        kept = moto_update_expressions._trees.of_tree(tree)
        assert kept is not None
        copied = pickle.loads(kept.pickled)
        assert copied is not tree
        assert dump(copied) == dump(copy.deepcopy(tree)) == dump(tree)


@pytest.fixture(scope="module")
def ddb() -> Iterator[Any]:
    with table_client(TABLE, {"pk": "S"}) as client:
        yield client


def _update(pk: str, **more: Any) -> dict[str, Any]:
    return {
        "TableName": TABLE,
        "Key": {"pk": {"S": pk}},
        "UpdateExpression": "SET #s = :s, #n = if_not_exists(#n, :zero) + :one",
        "ExpressionAttributeNames": {"#s": "state", "#n": "n"},
        "ExpressionAttributeValues": {":s": {"S": pk}, ":zero": {"N": "0"}, ":one": {"N": "1"}},
        **more,
    }


def test_an_update_parsed_once_applies_to_each_item_its_own_way(ddb: Any) -> None:
    ddb.update_item(**_update("a"))
    parsed = moto_update_expressions.parsed_count()
    ddb.update_item(**_update("a"))
    ddb.transact_write_items(TransactItems=[{"Update": _update("b")}, {"Update": _update("c")}])
    ddb.transact_write_items(TransactItems=[{"Update": _update("b")}])
    assert moto_update_expressions.parsed_count() == parsed
    items = {
        pk: ddb.get_item(TableName=TABLE, Key={"pk": {"S": pk}})["Item"] for pk in ("a", "b", "c")
    }
    assert {pk: (i["state"]["S"], i["n"]["N"]) for pk, i in items.items()} == {
        "a": ("a", "2"),
        "b": ("b", "2"),
        "c": ("c", "1"),
    }


def test_refusals_come_again_with_the_same_expression(ddb: Any) -> None:
    key_update = {**_update("k"), "ExpressionAttributeNames": {"#s": "pk", "#n": "n"}}
    missing = _update("m", UpdateExpression="SET #n = #n + :one", ExpressionAttributeValues={})
    missing["ExpressionAttributeValues"] = {":one": {"N": "1"}}
    missing["ExpressionAttributeNames"] = {"#n": "n"}
    for _ in range(2):
        with pytest.raises(ClientError, match="part of the key"):
            ddb.update_item(**key_update)
        with pytest.raises(ClientError, match="part of the key"):
            ddb.transact_write_items(TransactItems=[{"Update": key_update}])
        with pytest.raises(ClientError, match="does not exist"):
            ddb.update_item(**missing)
        with pytest.raises(ClientError, match="does not exist"):  # moto: the whole call refused
            ddb.transact_write_items(TransactItems=[{"Update": _update("t")}, {"Update": missing}])
        assert "Item" not in ddb.get_item(TableName=TABLE, Key={"pk": {"S": "t"}})
        with pytest.raises(ClientError, match="Invalid UpdateExpression"):
            ddb.update_item(**_update("x", UpdateExpression="SET #s = :s,"))
    ddb.update_item(**_update("k"))  # the same text with other names passes the key check
    ddb.put_item(TableName=TABLE, Item={"pk": {"S": "m"}, "n": {"N": "5"}})
    ddb.update_item(**missing)  # the same tree, another item: checked against this one
    item = ddb.get_item(TableName=TABLE, Key={"pk": {"S": "m"}})["Item"]
    assert item["n"] == {"N": "6"}
