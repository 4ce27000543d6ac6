"""The flows repository against DynamoDB (moto's server, provisioned from template.yaml): a flow
that a deployment uses cannot be deleted; deleting removes every version; a run is recorded once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from etikett.domain import flow_runs, flows
from etikett.domain.actors import Caller, Invocation
from etikett.errors import Conflict, NotFound
from etikett.store import flows as store
from etikett.store.unit_of_work import UnitOfWork
from support.stack import Stack, local_stack

DESIGNER = Invocation(
    Caller(actor="human", subject="test-designer", roles=frozenset({"designer"})), "deleteFlow"
)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with (
        pytest.MonkeyPatch.context() as monkeypatch,
        local_stack(tmp_path_factory.mktemp("flows"), monkeypatch) as running,
    ):
        yield running


def test_a_flow_in_use_is_not_deleted(stack: Stack) -> None:
    flow = flows.create(DESIGNER, flows.NewFlow(name="In use"))
    with UnitOfWork() as uow:
        store.mark_used(uow, flow.id, "dep_1")
    with pytest.raises(Conflict) as refused:
        flows.delete(DESIGNER, flow.id)
    assert refused.value.code == "flow.in_use"
    assert refused.value.params["deployment_ids"] == ["dep_1"]
    assert flows.get(flow.id).name == "In use"

    with UnitOfWork() as uow:
        store.unmark_used(uow, flow.id, "dep_1")
    flows.delete(DESIGNER, flow.id)
    with pytest.raises(NotFound):
        flows.get(flow.id)
    assert store.get_version(flow.id, 1) is None
    assert store.page_versions(flow.id, 10, None).items == []


def test_a_run_is_recorded_once_and_listed_newest_first(stack: Stack) -> None:
    flow = flows.create(DESIGNER, flows.NewFlow(name="Runs"))
    at = datetime(2026, 11, 24, 12, tzinfo=UTC)
    common = {
        "flow_id": flow.id,
        "version": 1,
        "trigger_node": "in",
        "trigger_source": "orders.csv",
        "started_at": at,
        "finished_at": at,
        "records": 3,
        "job_ids": ["job_1"],
        "trace": [{"node_id": "in"}],
        "runner_id": "run_a",
    }
    flow_runs.record_run(run_id="run_01", outcome="succeeded", **common)
    flow_runs.record_run(run_id="run_02", outcome="partial", **common)
    again = flow_runs.record_run(run_id="run_01", outcome="failed", **common)
    assert again.outcome == "succeeded"  # reported twice, recorded once: the first report stands
    listed = flow_runs.list_runs(
        flow.id, deployment_id=None, runner_id=None, outcome=None, limit=10, cursor=None
    )
    assert [(r.id, r.outcome) for r in listed.items] == [
        ("run_02", "partial"),
        ("run_01", "succeeded"),
    ]
    partial = flow_runs.list_runs(
        flow.id, deployment_id=None, runner_id="run_a", outcome="partial", limit=10, cursor=None
    )
    assert [r.id for r in partial.items] == ["run_02"]
    assert listed.items[0].trigger == {"node_id": "in", "source": "orders.csv"}
