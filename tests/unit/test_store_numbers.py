"""DynamoDB's number limits, as `etikett.store.numbers` checks them: 38 significant digits, 0 or
a magnitude from 1E-130 to 9.9…E+125, no NaN or infinity (the AWS limits; moto enforces only the
lower bound, so these are checked here against the documented values)."""

from __future__ import annotations

import math

import pytest

from etikett.store.numbers import first_unstorable, fits, refuse_unstorable
from etikett_engine.errors import InvalidRequest

STORABLE = [
    0,
    0.0,
    -0.0,
    1,
    -1,
    1e-130,
    -1e-130,
    9.99999999999999e125,  # (a float any closer to 1E+126 is 1E+126)
    -9.99999999999999e125,
    10**40,  # one significant digit
    12345678901234567890123456789012345678,  # 38 digits
    -12345678901234567890123456789012345678,
    123456789012345678901234567890123456780000,  # 38 significant digits, trailing zeros
    10**125,
    0.1,
    1.7976931348623157e308 / 1e183,  # a large float within the range
    True,
]
UNSTORABLE = [
    1.8778957114004295e-148,  # what the fuzzer sent
    -1.8778957114004295e-148,
    9.99e-131,
    5e-324,
    1e126,
    -1e126,
    1.7976931348623157e308,
    10**126,
    123456789012345678901234567890123456789,  # 39 significant digits
    -123456789012345678901234567890123456789,
    math.inf,
    -math.inf,
    math.nan,
]


@pytest.mark.parametrize("number", STORABLE)
def test_numbers_dynamodb_stores_fit(number: float) -> None:
    assert fits(number)


@pytest.mark.parametrize("number", UNSTORABLE, ids=repr)
def test_numbers_dynamodb_refuses_do_not_fit(number: float) -> None:
    assert not fits(number)


def test_the_first_unstorable_number_is_named_by_its_path_also_deep_inside() -> None:
    assert first_unstorable({"a": [1, "x", {"b": 2.5}], "c": None}, "body") is None
    assert first_unstorable({"a": [1, {"b": 1e-200}]}, "body") == "body.a.1.b"
    assert first_unstorable([[[[10**39 + 1]]]], "body.records") == "body.records.0.0.0.0"
    assert first_unstorable(1e-200, "body.value") == "body.value"


def test_the_refusal_is_request_invalid_naming_the_field() -> None:
    with pytest.raises(InvalidRequest) as refused:
        refuse_unstorable({"value": {"weights": [1.0, math.inf]}}, "body")
    (field,) = refused.value.params["fields"]
    assert field["field"] == "body.value.weights.1"
    assert field["type"] == "number_out_of_range" and "38 significant digits" in field["message"]
    refuse_unstorable({"value": [1e-130, 10**40, -3]}, "body")  # nothing to refuse


def test_values_not_made_by_a_json_parser_are_checked_too() -> None:
    class Mapping(dict):  # type: ignore[type-arg]
        pass

    assert first_unstorable({"a": Mapping(b=[1, 1e-200])}, "body") == "body.a.b.1"
    assert first_unstorable({"a": Mapping(b=[1, 2.0])}, "body") is None
