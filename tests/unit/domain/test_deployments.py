"""Deployments: a flow version rolled out to Runner groups stage by stage, each stage approved by
a person while the policy is on, Runners' reports moving it on, newer deployments superseding
older ones, rollback, and the deployment's context and printer aliases."""

from __future__ import annotations

from typing import Any

import pytest

from etikett.domain import deployments
from etikett.domain.deployments import Approval, NewDeployment, Rollback, RunnerReport, StageIn
from etikett.domain.flows import flows
from etikett.domain.labels.label_versions import DocumentPatch
from etikett.domain.users import policies
from etikett.store import deployments as deployment_store
from etikett.store import flows as flow_store
from etikett.store.runners import RunnerRecord
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain import build
from unit.domain.callers import agent, human, operations, trail

pytestmark = pytest.mark.usefixtures("aws")


def _deploy(
    flow_id: str, *stages: list[str], version: int = 1, by: Any = None, **more: Any
) -> deployments.Deployment:
    return deployments.create(
        by or human("createDeployment", "operator"),
        NewDeployment(
            flow_id=flow_id,
            version=version,
            stages=[StageIn(group_ids=groups) for groups in stages],
            **more,
        ),
    )


def _approve(deployment_id: str, stage: int = 0, by: Any = None) -> deployments.Deployment:
    return deployments.approve(
        by or human("postDeploymentApproval", "approver"), deployment_id, Approval(stage=stage)
    )


def _report(runner: RunnerRecord, deployment_id: str, status: str) -> deployments.Deployment:
    deployments.report(runner, deployment_id, RunnerReport(status=status))  # type: ignore[arg-type]
    return deployments.get(deployment_id)


def _statuses(deployment: deployments.Deployment) -> list[str]:
    return [stage.status for stage in deployment.stages]


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


@pytest.fixture
def policy_off() -> Any:
    admin = human("putPolicy", "admin")
    policies.put(admin, policies.AI_APPROVAL, policies.PolicyChange(enabled=False))
    yield
    policies.put(admin, policies.AI_APPROVAL, policies.PolicyChange(enabled=True))


# --- creating -------------------------------------------------------------------------------


def test_a_new_deployment_awaits_approval_of_its_first_stage_only() -> None:
    flow, first, second = build.flow(), build.group(), build.group()
    created = _deploy(flow.id, [first.id], [second.id], context={"site": "Nord"})
    assert created.status == "awaiting_approval"
    assert _statuses(created) == ["awaiting_approval", "pending"]
    assert created.author.actor == "human"
    (entry,) = trail(created.id)
    assert entry.operation_id == "createDeployment"
    off = {"allowed": False, "max_hours": 8, "max_labels": 1000, "counter_block_size": 100}
    assert entry.details == {"flow_id": flow.id, "version": 1, "offline": off}
    assert created.offline.model_dump() == off
    assert [p.value for p in deployments.context(created.id)] == ["Nord"]
    listed = deployments.list_deployments(flow.id, None, 10, None).items
    assert [d.id for d in listed] == [created.id]
    assert deployments.list_deployments(flow.id, "active", 10, None).items == []


def test_a_flow_version_with_lint_errors_is_not_deployed() -> None:
    flow = flows.create(human("createFlow"), flows.NewFlow(name="ohne Auslöser"))
    error = _refused(
        ProblemCode.DEPLOYMENT_FLOW_HAS_ERRORS, lambda: _deploy(flow.id, [build.group().id])
    )
    assert {f["code"] for f in error.params["findings"]} == {"flow.no_trigger"}
    assert deployments.list_deployments(flow.id, None, 10, None).items == []


def test_stages_name_existing_groups_each_once_and_printers_that_exist() -> None:
    flow, group = build.flow(), build.group()
    _refused(ProblemCode.RUNNER_GROUP_NOT_FOUND, lambda: _deploy(flow.id, ["rgp_missing"]))
    twice = _refused(ProblemCode.REQUEST_INVALID, lambda: _deploy(flow.id, [group.id], [group.id]))
    assert twice.params["fields"][0]["field"] == "body.stages.1.group_ids"
    _refused(
        ProblemCode.PRINTER_NOT_FOUND,
        lambda: _deploy(flow.id, [group.id], printers={"shipping": "prn_missing"}),
    )
    _refused(ProblemCode.FLOW_VERSION_NOT_FOUND, lambda: _deploy(flow.id, [group.id], version=2))
    assert deployments.list_deployments(flow.id, None, 10, None).items == []


def test_an_agent_may_not_deploy_a_version_that_never_ran_while_the_policy_is_on() -> None:
    flow, group = build.flow(), build.group()
    robot = agent("createDeployment", "operator", "admin")
    error = _refused(
        ProblemCode.POLICY_HUMAN_REQUIRED, lambda: _deploy(flow.id, [group.id], by=robot)
    )
    assert error.params["policy"] == policies.AI_APPROVAL
    first = _deploy(flow.id, [group.id])
    _approve(first.id)  # a person rolled version 1 out: it ran
    again = _deploy(flow.id, [build.group().id], by=robot)
    assert again.author.actor == "service"


def test_with_the_policy_off_an_agent_deploys_and_approves(policy_off: Any) -> None:
    flow, group = build.flow(), build.group()
    robot = agent("createDeployment", "operator")
    created = _deploy(flow.id, [group.id], by=robot)
    assert _approve(created.id, by=agent("postDeploymentApproval", "approver")).status == "active"


# --- approval and progress ------------------------------------------------------------------


def test_only_a_person_approves_a_stage_while_the_policy_is_on() -> None:
    flow, group = build.flow(), build.group()
    created = _deploy(flow.id, [group.id])
    robot = agent("postDeploymentApproval", "approver", "admin")
    _refused(ProblemCode.POLICY_HUMAN_REQUIRED, lambda: _approve(created.id, by=robot))
    assert deployments.get(created.id).status == "awaiting_approval"
    assert operations(created.id) == ["createDeployment"]


def test_only_the_stage_awaiting_approval_can_be_approved() -> None:
    flow = build.flow()
    created = _deploy(flow.id, [build.group().id], [build.group().id])
    for stage in (1, 2):
        error = _refused(
            ProblemCode.DEPLOYMENT_STAGE_NOT_AWAITING, lambda s=stage: _approve(created.id, s)
        )
        assert error.params["stage"] == stage
    approved = _approve(created.id, 0)  # a group without Runners is active at once
    assert _statuses(approved) == ["active", "awaiting_approval"]
    assert approved.stages[0].approved_by is not None
    _refused(ProblemCode.DEPLOYMENT_STAGE_NOT_AWAITING, lambda: _approve(created.id, 0))
    assert _approve(created.id, 1).status == "active"


def test_a_stage_is_active_once_every_online_runner_runs_the_version() -> None:
    flow, group = build.flow(), build.group()
    one, two = build.runner(group.id), build.runner(group.id)
    created = _deploy(flow.id, [group.id])
    rolling = _approve(created.id)
    assert rolling.status == "rolling_out"
    assert {r.runner_id: r.status for r in rolling.stages[0].runners} == {
        one.id: "pending",
        two.id: "pending",
    }
    assert _report(one, created.id, "active").status == "rolling_out"
    done = _report(two, created.id, "active")
    assert done.status == "active" and _statuses(done) == ["active"]


def test_a_failing_runner_fails_the_stage_until_it_tries_again() -> None:
    flow, group = build.flow(), build.group()
    runner = build.runner(group.id)
    created = _deploy(flow.id, [group.id])
    _approve(created.id)
    failed = _report(runner, created.id, "failed")
    assert failed.status == "failed" and _statuses(failed) == ["failed"]
    assert _report(runner, created.id, "applying").status == "rolling_out"
    assert _report(runner, created.id, "active").status == "active"


def test_a_stage_of_offline_runners_waits_and_says_why() -> None:
    flow, group = build.flow(), build.group()
    build.runner(group.id, online=False)
    created = _deploy(flow.id, [group.id])
    waiting = _approve(created.id)
    assert waiting.status == "rolling_out"
    assert waiting.stages[0].runners[0].detail == "offline (never seen)"


# --- supersede and rollback -----------------------------------------------------------------


def _second_version(flow_id: str) -> None:
    flows.patch_document(
        human("patchFlowDocument"),
        flow_id,
        DocumentPatch(operations=[{"op": "replace", "path": "/nodes/0/every_s", "value": 5}]),
    )


def test_a_newer_deployment_supersedes_the_older_one_and_rollback_restores_it() -> None:
    flow, group = build.flow(), build.group()
    older = _deploy(flow.id, [group.id])
    assert _approve(older.id).status == "active"
    _second_version(flow.id)
    newer = _deploy(flow.id, [group.id], version=2)
    assert _approve(newer.id).status == "active"
    assert deployments.get(older.id).status == "superseded"
    target = deployment_store.group_flow(group.id, flow.id)
    assert target is not None and (target.deployment_id, target.version) == (newer.id, 2)

    rolled = deployments.rollback(
        human("postDeploymentRollback"), newer.id, Rollback(comment="zurück")
    )
    assert rolled.status == "rolled_back" and _statuses(rolled) == ["rolled_back"]
    target = deployment_store.group_flow(group.id, flow.id)
    assert target is not None and (target.deployment_id, target.version) == (older.id, 1)
    assert trail(newer.id)[-1].details == {
        "comment": "zurück",
        "restored": {group.id: f"{older.id}@1"},
        "stopped": [],
        "reactivated": [older.id],
    }
    # The service itself brought the older deployment back: its trail says so.
    assert deployments.get(older.id).status == "active"
    revival = trail(older.id)[-1]
    assert (revival.actor, revival.operation_id) == ("system", "reactivateDeployment")
    assert revival.details == {"by_rollback_of": newer.id, "groups": [group.id]}


def test_a_deployment_a_rollback_puts_back_runs_again_and_keeps_its_flow_in_use() -> None:
    """After the rollback both groups run the older deployment again: it is active, its flow is
    in use (not deleted under the Runners), and it can be rolled back in turn."""
    flow, north, south = build.flow(), build.group(), build.group()
    older = _deploy(flow.id, [north.id, south.id])
    _approve(older.id)
    _second_version(flow.id)
    newer = _deploy(flow.id, [north.id, south.id], version=2)
    _approve(newer.id)
    assert deployments.get(older.id).status == "superseded"
    assert flow_store.deployments_using(flow.id) == [newer.id]
    deployments.rollback(human("postDeploymentRollback"), newer.id, Rollback())
    error = _refused(ProblemCode.FLOW_IN_USE, lambda: flows.delete(human("deleteFlow"), flow.id))
    assert error.params["deployment_ids"] == [older.id]
    assert flows.get_document(flow.id, 1).version == 1
    # It runs again, so it is active again, and rolling it back stops the flow there.
    assert deployments.get(older.id).status == "active"
    deployments.rollback(human("postDeploymentRollback"), older.id, Rollback())
    assert deployment_store.group_flow(north.id, flow.id) is None
    assert deployment_store.group_flow(south.id, flow.id) is None
    flows.delete(human("deleteFlow"), flow.id)


def test_rolling_back_a_first_deployment_stops_the_flow_on_its_groups() -> None:
    flow, group = build.flow(), build.group()
    created = _deploy(flow.id, [group.id])
    _approve(created.id)
    deployments.rollback(agent("postDeploymentRollback", "operator"), created.id, Rollback())
    assert deployment_store.group_flow(group.id, flow.id) is None
    assert trail(created.id)[-1].details == {
        "comment": None,
        "restored": {},
        "stopped": [group.id],
        "reactivated": [],
    }
    _refused(
        ProblemCode.DEPLOYMENT_ENDED,
        lambda: deployments.rollback(human("postDeploymentRollback"), created.id, Rollback()),
    )
    _refused(ProblemCode.DEPLOYMENT_STAGE_NOT_AWAITING, lambda: _approve(created.id))


# --- context, printers, concurrent changes --------------------------------------------------


def test_context_parameters_are_set_replaced_and_removed_with_audit_entries() -> None:
    created = _deploy(build.flow().id, [build.group().id])
    operator = human("putDeploymentContextParameter", "operator", subject="olga")
    deployments.put_context(operator, created.id, "site", "Nord")
    changed = deployments.put_context(operator, created.id, "site", {"name": "Süd"})
    assert changed.value == {"name": "Süd"} and changed.updated_by == "olga"
    assert trail(created.id)[-1].details == {
        "name": "site",
        "before": "Nord",
        "after": {"name": "Süd"},
    }
    deployments.delete_context(human("deleteDeploymentContextParameter"), created.id, "site")
    assert deployments.context(created.id) == []
    _refused(
        ProblemCode.CONTEXT_NOT_FOUND,
        lambda: deployments.delete_context(human("x"), created.id, "site"),
    )
    _refused(
        ProblemCode.REQUEST_INVALID,
        lambda: deployments.put_context(operator, created.id, "x" * 101, 1),
    )


def test_printer_aliases_name_existing_printers_per_runner_if_need_be() -> None:
    group = build.group()
    runner = build.runner(group.id)
    main, spare = build.printer(runner.id, "Halle-1"), build.printer(runner.id, "Halle-2")
    created = _deploy(build.flow().id, [group.id], printers={"shipping": main.id})
    record = deployments.load(created.id)
    assert deployments.printer_for(record, "shipping", runner.id) == main.id
    deployments.put_printer(
        human("putDeploymentPrinter"),
        created.id,
        "shipping",
        deployments.PrinterAssignment(printer_id=main.id, by_runner={runner.id: spare.id}),
    )
    record = deployments.load(created.id)
    assert deployments.printer_for(record, "shipping", runner.id) == spare.id
    assert deployments.printer_for(record, "shipping", "run_other") == main.id
    assert deployments.printer_for(record, "labels", runner.id) is None
    _refused(
        ProblemCode.PRINTER_NOT_FOUND,
        lambda: deployments.put_printer(
            human("x"), created.id, "shipping", deployments.PrinterAssignment(printer_id="prn_x")
        ),
    )
    _refused(
        ProblemCode.REQUEST_INVALID,
        lambda: deployments.put_printer(
            human("x"),
            created.id,
            "not an alias",
            deployments.PrinterAssignment(printer_id=main.id),
        ),
    )
    deployments.delete_printer(human("deleteDeploymentPrinter"), created.id, "shipping")
    assert deployments.assigned_printers(created.id) == []
    _refused(
        ProblemCode.DEPLOYMENT_PRINTER_NOT_FOUND,
        lambda: deployments.delete_printer(human("x"), created.id, "shipping"),
    )


def test_a_change_to_a_deployment_that_changed_meanwhile_writes_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    created = _deploy(build.flow().id, [build.group().id])
    read = deployment_store.get

    def read_then_lose_the_race(deployment_id: str) -> Any:
        stale = read(deployment_id)
        monkeypatch.setattr(deployment_store, "get", read)
        deployments.put_context(human("first"), deployment_id, "site", "Nord")
        return stale

    monkeypatch.setattr(deployment_store, "get", read_then_lose_the_race)
    _refused(
        ProblemCode.RESOURCE_CONFLICT,
        lambda: deployments.put_context(human("second"), created.id, "line", 3),
    )
    assert [p.name for p in deployments.context(created.id)] == ["site"]
    assert operations(created.id) == ["createDeployment", "first"]


def test_deployments_of_a_group_are_listed_newest_first() -> None:
    flow, group = build.flow(), build.group()
    made = [_deploy(flow.id, [group.id]).id for _ in range(3)]
    first = deployments.list_for_group(group.id, 2, None)
    rest = deployments.list_for_group(group.id, 2, first.next_cursor)
    assert [d.id for d in first.items + rest.items] == made[::-1]
    _refused(
        ProblemCode.RUNNER_GROUP_NOT_FOUND, lambda: deployments.list_for_group("rgp_x", 2, None)
    )


def test_a_missing_deployment_is_deployment_not_found() -> None:
    for change in (
        lambda: deployments.get("dep_missing"),
        lambda: _approve("dep_missing"),
        lambda: deployments.rollback(human("x"), "dep_missing", Rollback()),
        lambda: deployments.put_context(human("x"), "dep_missing", "a", 1),
    ):
        _refused(ProblemCode.DEPLOYMENT_NOT_FOUND, change)
