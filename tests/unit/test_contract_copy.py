"""The repository's copy of the operation contract (docs/contract/operations.md), which the role
matrix checks the service against, is the specification's own, wherever the specification lies
beside the checkout. A clean clone elsewhere has only the copy: the check is then skipped, with
the reason shown."""

from __future__ import annotations

import pytest

from support.contract import CONTRACT_COPY, contract, specification_md


def test_the_copy_is_the_specifications() -> None:
    specification = specification_md()
    if specification is None:
        pytest.skip("no shared/spec/operations.md beside this checkout to compare the copy with")
    assert CONTRACT_COPY.read_text(encoding="utf-8") == specification.read_text(encoding="utf-8"), (
        f"{CONTRACT_COPY} differs from {specification}: copy the specification's contract over"
    )


def test_the_copy_holds_every_group_of_operations() -> None:
    operation_ids = {operation.operation_id for operation in contract()}
    # One operation of each table: a copy cut short or mangled is caught even without the original.
    assert {
        "listAuditLog",
        "login",
        "postCelEvaluate",
        "listCredentials",
        "createDeployment",
        "createFlow",
        "patchLabelDocument",
        "postPrint",
        "deletePrinter",
        "createRunnerEnrollment",
        "createUser",
        "postImport",
        "aiLogQA",
        "createCounter",
        "createWebhook",
    } <= operation_ids
    assert len(operation_ids) == len(contract())
