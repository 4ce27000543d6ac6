"""Local mode's fault injection (etikett.local.faults) and how the service tells throttling from
other failures (etikett.store.base.throttled). End to end: tests/e2e/test_faults.py."""

from __future__ import annotations

import json

import botocore.session
import pytest
from botocore.exceptions import ClientError, ReadTimeoutError
from botocore.parsers import create_parser
from pynamodb.exceptions import PutError, TransactGetError

from etikett.local.faults import PATH, Faults
from etikett.store.base import throttled, unavailable

PUT = "DynamoDB_20120810.PutItem"
QUERY = "DynamoDB_20120810.Query"


def test_a_rule_fires_on_every_nth_matching_request_up_to_its_limit() -> None:
    faults = Faults()
    rules = {"rules": [{"service": "dynamodb", "operations": ["PutItem"], "every": 2, "limit": 2}]}
    status, _, _ = faults._control("POST", json.dumps(rules).encode())
    assert status.startswith("200")
    answers = [faults.answer("POST", "/", PUT, b"{}") for _ in range(6)]
    assert [a is not None for a in answers] == [False, True, False, True, False, False]
    assert faults.answer("POST", "/", QUERY, b"{}") is None  # another operation
    assert faults.answer("POST", "/", "AmazonSQS.SendMessage", b"{}") is None  # another service
    status, _, body = answers[1]  # type: ignore[misc]
    assert status == "400 Bad Request"
    assert json.loads(body)["__type"].endswith("#ProvisionedThroughputExceededException")
    state = json.loads(faults.answer("GET", PATH, "", b"")[2])  # type: ignore[index]
    assert state["rules"][0] | {"seen": 6, "fired": 2} == state["rules"][0]
    faults.answer("DELETE", PATH, "", b"")
    assert faults.answer("POST", "/", PUT, b"{}") is None


@pytest.mark.parametrize(
    "rule",
    [
        {"service": "s3"},
        {"service": "dynamodb", "every": 0},
        {"operations": ["PutItem"]},
        {"service": "dynamodb", "error": "broken"},
    ],
)
def test_a_rule_that_cannot_fire_is_refused(rule: dict) -> None:
    status, _, body = Faults()._control("POST", json.dumps({"rules": [rule]}).encode())
    assert status.startswith("400") and json.loads(body)["error"]


def test_the_sdk_reads_an_injected_fault_as_throttling() -> None:
    """The answer is what DynamoDB sends when it throttles: botocore's own parser names it so."""
    faults = Faults()
    faults._control("POST", b'{"rules": [{"service": "dynamodb"}]}')
    status, headers, body = faults.answer("POST", "/", PUT, b"{}")  # type: ignore[misc]
    model = botocore.session.get_session().get_service_model("dynamodb")
    parsed = create_parser(model.protocol).parse(
        {"status_code": int(status.split()[0]), "headers": dict(headers), "body": body},
        model.operation_model("PutItem").output_shape,
    )
    assert parsed["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert throttled(ClientError(parsed, "PutItem"))


def test_throttling_is_recognised_through_the_errors_that_wrap_it() -> None:
    cause = ClientError(
        {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}},
        "PutItem",
    )
    try:
        try:
            raise cause
        except ClientError as error:
            raise PutError("Failed to put item", error) from error
    except PutError as wrapped:
        assert throttled(wrapped)
    other = ClientError({"Error": {"Code": "ValidationException", "Message": "no"}}, "PutItem")
    assert not throttled(other) and not throttled(ValueError("x"))


def test_an_unavailable_or_silent_aws_is_told_from_a_bug() -> None:
    """503 after the SDK's retries, or no answer in time, is AWS overloaded or away (503
    `service.busy`), not an unexpected error; neither is throttling."""
    faults = Faults()
    faults._control("POST", b'{"rules": [{"service": "dynamodb", "error": "unavailable"}]}')
    status, headers, body = faults.answer("POST", "/", PUT, b"{}")  # type: ignore[misc]
    assert status.startswith("503")
    model = botocore.session.get_session().get_service_model("dynamodb")
    parsed = create_parser(model.protocol).parse(
        {"status_code": 503, "headers": dict(headers), "body": body},
        model.operation_model("PutItem").output_shape,
    )
    parsed.setdefault("ResponseMetadata", {})["HTTPStatusCode"] = 503
    answered = ClientError(parsed, "PutItem")
    assert unavailable(answered) and not throttled(answered)
    try:
        try:
            raise ReadTimeoutError(endpoint_url="http://127.0.0.1:1/")
        except ReadTimeoutError as error:
            raise TransactGetError("Failed to get transaction items", error) from error
    except TransactGetError as wrapped:
        assert unavailable(wrapped)
    other = ClientError({"Error": {"Code": "ValidationException", "Message": "no"}}, "PutItem")
    assert not unavailable(other) and not unavailable(ValueError("x"))
