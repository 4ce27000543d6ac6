"""Local mode lists each moto response class's actions once (moto_actions): the same list as
moto's (call_action only asks whether the action is in it; every local AWS test goes through it)."""

from __future__ import annotations

from moto.core import responses
from moto.core.utils import method_names_from_class
from moto.dynamodb.responses import DynamoHandler
from moto.sqs.responses import SQSResponse

from etikett.local import moto_actions


def test_the_kept_lists_are_moto_s() -> None:
    moto_actions.install()
    for handler in (DynamoHandler, SQSResponse):
        kept = responses.method_names_from_class(handler)
        assert kept == method_names_from_class(handler)
        assert responses.method_names_from_class(handler) is kept  # made once
