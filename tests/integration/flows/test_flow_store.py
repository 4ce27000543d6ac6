"""The flows repository against DynamoDB (moto's server, provisioned from template.yaml): a flow
that a deployment uses cannot be deleted; deleting removes every version; a run is recorded once."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from etikett.domain.actors import Caller, Invocation
from etikett.domain.flows import flow_runs, flows
from etikett.store import flows as store
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, NotFound
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


def test_a_claim_that_comes_in_after_the_check_still_stops_the_delete(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check of the deployments and the delete are one conditional write: a deployment
    claiming the flow between the two is not lost (the delete is refused)."""
    flow = flows.create(DESIGNER, flows.NewFlow(name="Raced"))
    with UnitOfWork() as uow:
        store.mark_used(uow, flow.id, "dep_late")
    monkeypatch.setattr(store, "deployments_using", lambda flow_id: [])  # read before the claim
    with pytest.raises(Conflict) as refused:
        flows.delete(DESIGNER, flow.id)
    assert refused.value.code == "flow.in_use"
    monkeypatch.undo()
    assert flows.get(flow.id).name == "Raced"
    with UnitOfWork() as uow:
        store.unmark_used(uow, flow.id, "dep_late")
    flows.delete(DESIGNER, flow.id)
    with pytest.raises(NotFound):
        flows.get(flow.id)


def test_a_claim_on_a_deleted_flow_is_refused(stack: Stack) -> None:
    flow = flows.create(DESIGNER, flows.NewFlow(name="Gone"))
    flows.delete(DESIGNER, flow.id)
    with pytest.raises(Conflict), UnitOfWork() as uow:
        store.mark_used(uow, flow.id, "dep_after")
    assert store.deployments_using(flow.id) == []


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


def test_a_runner_is_served_its_flows_even_when_one_version_is_gone(stack: Stack) -> None:
    """The agent channel's flows answer never fails as a whole: a target whose version does not
    exist (a deployment left pointing at it) comes with the reason, beside the sound one."""
    from etikett import clock
    from etikett.domain.agent import runner_flows
    from etikett.store import deployments as deployment_store
    from etikett.store.deployments import DeploymentRecord, GroupFlowRecord
    from etikett.store.runners import RunnerRecord

    now = clock.now()
    sound = flows.create(DESIGNER, flows.NewFlow(name="Sound"))
    lost = flows.create(DESIGNER, flows.NewFlow(name="Lost"))
    group = "rgp_01TESTGROUPFORLOSTVERSIONS0"
    for flow_id, version, deployment_id in ((sound.id, 1, "dep_sound"), (lost.id, 7, "dep_lost")):
        record = DeploymentRecord(
            id=f"{deployment_id}_{flow_id}",
            flow_id=flow_id,
            version=version,
            status="active",
            stages=[{"index": 0, "group_ids": [group], "status": "active"}],
            printers={},
            context={"site": {"value": "A", "updated_at": "", "updated_by": "t"}},
            author_actor="human",
            author_subject="t",
            created_at=now,
            updated_at=now,
            rev=0,
        )
        with UnitOfWork() as uow:
            deployment_store.add(uow, record)
            deployment_store.set_group_flow(
                uow, GroupFlowRecord(group, flow_id, record.id, version, None, None, now)
            )
    runner = RunnerRecord(
        id="run_01TESTRUNNERLOSTVERSIONS00",
        group_id=group,
        name="site-pc",
        hostname=None,
        version=None,
        state="active",
        certificate_serial=None,
        certificate_not_after=None,
        queue_url=None,
        last_seen_at=now,
        created_at=now,
    )
    served = {f.flow_id: f for f in runner_flows.deployed_flows(runner)}
    assert served[sound.id].problems == [] and served[sound.id].context == {"site": "A"}
    assert served[lost.id].problems == [f"version 7 of {lost.id} no longer exists"]
    assert served[lost.id].document == {"nodes": []}


def test_an_item_over_the_store_limit_is_a_problem_not_a_crash(stack: Stack) -> None:
    """DynamoDB refuses items over 400 KB: a change that would write one is refused with 413
    `resource.too_large` (nothing written), in a transaction and on its own."""
    from etikett import clock
    from etikett.store import deployments as deployment_store
    from etikett.store.deployments import DeploymentRecord
    from etikett_engine.errors import EtikettError

    now = clock.now()
    huge = DeploymentRecord(
        id="dep_01TESTHUGEDEPLOYMENT000000",
        flow_id="flw_01TESTHUGE",
        version=1,
        status="awaiting_approval",
        stages=[],
        printers={},
        context={"blob": {"value": "x" * 420_000, "updated_at": "", "updated_by": "t"}},
        author_actor="human",
        author_subject="t",
        created_at=now,
        updated_at=now,
        rev=0,
    )
    with pytest.raises(EtikettError) as refused, UnitOfWork() as uow:
        deployment_store.add(uow, huge)
    assert (refused.value.code, refused.value.status) == ("resource.too_large", 413)
    assert deployment_store.get(huge.id) is None

    flow = flows.create(DESIGNER, flows.NewFlow(name="Huge run"))
    at = datetime(2026, 11, 24, 12, tzinfo=UTC)
    with pytest.raises(EtikettError) as too_many:
        flow_runs.record_run(
            run_id="frn_huge",
            flow_id=flow.id,
            version=1,
            trigger_node="in",
            trigger_source=None,
            started_at=at,
            finished_at=at,
            outcome="succeeded",
            records=1,
            job_ids=[f"job_{i:040d}" for i in range(10_000)],
            trace={},
        )
    assert too_many.value.code == "resource.too_large"
    # Job ids that fit beside no trace: the run is recorded, its trace noted as too large.
    import os

    kept = flow_runs.record_run(
        run_id="frn_bigtrace",
        flow_id=flow.id,
        version=1,
        trigger_node="in",
        trigger_source=None,
        started_at=at,
        finished_at=at,
        outcome="succeeded",
        records=1,
        job_ids=[f"job_{i:026d}" for i in range(10_000)],
        trace={"noise": os.urandom(100_000).hex()},
    )
    assert len(kept.job_ids) == 10_000 and kept.trace["truncated"] is True


def test_a_dry_run_reports_the_refusal_a_print_of_a_label_with_errors_would_meet(
    stack: Stack,
) -> None:
    """An approved version that preflight now finds errors in (approved before a rule existed,
    or laid out anew with a wider counter value) is refused by the print path with
    `label.has_errors`; the dry run's print says so instead of "would print"."""

    from etikett import clock
    from etikett.domain.labels import label_records, label_versions, labels
    from etikett.domain.labels.label_versions import DocumentPatch
    from etikett.store import labels as label_store

    label = labels.create_from_dimensions(
        DESIGNER, labels.NewLabelFromDimensions(name="Clipped", width_mm=101.6, height_mm=50.8)
    )
    clipped = {
        "id": "sscc",
        "type": "barcode",
        "symbology": "gs1-128",
        "x_mm": 30,
        "y_mm": 5,
        "height_mm": 15,
        "module_width_dots": 4,
        "content": "(00)340123451234567895",
    }
    label_versions.patch_document(
        DESIGNER,
        label.id,
        DocumentPatch(operations=[{"op": "add", "path": "/objects/-", "value": clipped}]),
    )
    version = label_records.load_version(label.id, "label", 2)
    meta = label_records.load_label(label.id)
    with UnitOfWork() as uow:  # approved without preflight, as before its rules existed
        label_store.set_version_status(uow, version, "approved", clock.now(), "test")
        label_store.release(uow, meta, meta._replace(released_version=2), "label")

    flow = flows.create(
        DESIGNER,
        flows.NewFlow(
            name="Prints a clipped label",
            document={
                "nodes": [
                    {"id": "in", "type": "trigger.http", "path": "p", "wires": ["print"]},
                    {"id": "print", "type": "action.print", "label": label.id, "printer": "dock"},
                ],
                "samples": [{}],
            },
        ),
    )
    (run,) = flow_runs.dry_run(flow.id, flow_runs.DryRunRequest()).runs
    (error,) = run.errors
    assert error["node_id"] == "print" and "label.has_errors" in error["message"]
    (effect,) = run.side_effects
    assert effect.kind == "print" and effect.performed is False
    refused = effect.detail["refused"]
    assert refused["code"] == "label.has_errors"
    assert refused["findings"][0]["code"] == "label.barcode_clipped"
    assert effect.detail["version"] == 2 and run.trace[1].status == "error"


def test_a_stage_with_more_runners_than_one_transaction_takes_is_approved(stack: Stack) -> None:
    """Approving writes a `pending` state per Runner of the stage: 120 Runners do not fit the
    100 items of one transaction, and the approval must still go through (not a 500)."""
    from etikett import clock
    from etikett.domain import deployments
    from etikett.domain.actors import Caller, Invocation
    from etikett.domain.runners import runners
    from etikett.store import runners as runner_store
    from etikett.store.runners import RunnerRecord

    people = Invocation(
        Caller(actor="human", subject="test-operator", roles=frozenset({"admin"})), "t"
    )
    group = runners.create_group(people, runners.NewRunnerGroup(name="Big hall"))
    now = clock.now()
    for index in range(120):
        with UnitOfWork() as uow:
            runner_store.add_runner(
                uow,
                RunnerRecord(
                    id=f"run_01BIGHALL{index:017d}",
                    group_id=group.id,
                    name=f"pc-{index}",
                    hostname=None,
                    version=None,
                    state="active",
                    certificate_serial=None,
                    certificate_not_after=None,
                    queue_url=None,
                    last_seen_at=now,
                    created_at=now,
                ),
            )
    flow = flows.create(
        DESIGNER,
        flows.NewFlow(
            name="Everywhere",
            document={
                "nodes": [
                    {"id": "t", "type": "trigger.schedule", "every_s": 60, "wires": ["l"]},
                    {"id": "l", "type": "action.log", "message": "'x'"},
                ]
            },
        ),
    )
    created = deployments.create(
        people,
        deployments.NewDeployment(flow_id=flow.id, version=1, stages=[{"group_ids": [group.id]}]),
    )
    approved = deployments.approve(people, created.id, deployments.Approval(stage=0))
    assert approved.stages[0].status == "rolling_out"
    assert len(approved.stages[0].runners) == 120
    assert {r.status for r in approved.stages[0].runners} == {"pending"}
