"""Every Flows and Deployments operation shows, in the OpenAPI document, an example of its
request body (where it takes one) and of its answer; each example fits its own schema."""

from __future__ import annotations

from typing import Any

import pytest

from support.openapi_examples import check_examples, operations

GROUPS = {"Flows", "Deployments"}


def test_every_operation_of_both_groups_is_checked() -> None:
    names = {name for name, _ in operations(GROUPS)}
    wanted = {"listFlows", "postFlowDryRun", "createDeployment", "listRunnerGroupDeployments"}
    assert wanted <= names
    assert len(names) == 26


@pytest.mark.parametrize(("name", "operation"), operations(GROUPS), ids=lambda v: str(v)[:40])
def test_requests_and_answers_have_examples_that_fit(name: str, operation: dict[str, Any]) -> None:
    check_examples(name, operation)
