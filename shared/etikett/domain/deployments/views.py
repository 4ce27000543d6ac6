"""Deployments as callers see them: stages with their Runners' states (offline Runners marked),
one at a time or listed.
"""

from __future__ import annotations

from typing import Any

from etikett import clock
from etikett.domain.deployments import changes
from etikett.domain.deployments.models import (
    Author,
    Deployment,
    OfflinePolicy,
    RunnerState,
    Stage,
)
from etikett.domain.deployments.records import load
from etikett.domain.runners import runner_context, runner_records
from etikett.store import deployments as store
from etikett.store import runners as runner_store
from etikett.store.deployments import DeploymentRecord, RunnerStateRecord
from etikett.store.pages import Page


def view(record: DeploymentRecord, states: list[RunnerStateRecord]) -> Deployment:
    offline = _offline(states)
    by_group: dict[str, list[RunnerState]] = {}
    for state in states:
        by_group.setdefault(state.group_id, []).append(
            RunnerState(
                runner_id=state.runner_id,
                status=state.status,
                detail=offline.get(state.runner_id, state.detail),
            )
        )
    stages = [
        Stage(
            index=stage["index"],
            group_ids=stage["group_ids"],
            status=stage["status"],
            approved_by=stage.get("approved_by"),
            approved_at=stage.get("approved_at"),
            changed_since_approval=changes.changed_since_approval(record, stage),
            changes_await_approval=bool(stage.get(changes.HELD)),
            runners=[r for g in stage["group_ids"] for r in by_group.get(g, [])],
        )
        for stage in record.stages
    ]
    return Deployment(
        id=record.id,
        flow_id=record.flow_id,
        version=record.version,
        status=record.status,
        stages=stages,
        changed_since_approval=any(s.changed_since_approval for s in stages),
        offline=offline_policy(record),
        author=Author(actor=record.author_actor, subject=record.author_subject),
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
    )


def offline_policy(record: DeploymentRecord) -> OfflinePolicy:
    """The deployment's offline policy; off for one made before policies were kept."""
    return OfflinePolicy.model_validate(record.offline or {})


def _offline(states: list[RunnerStateRecord]) -> dict[str, str]:
    """Runner id → why it has not applied the version yet, for those offline now."""

    waiting = [s.runner_id for s in states if s.status in ("pending", "applying")]
    now = clock.now()
    answer = {}
    for runner in runner_store.get_runners(waiting):
        if runner_records.status_of(runner, now) != "online":
            seen = runner.last_seen_at
            answer[runner.id] = (
                f"offline since {clock.rfc3339(seen)}" if seen else "offline (never seen)"
            )
    return answer


def get(deployment_id: str) -> Deployment:
    record = load(deployment_id)
    return view(record, store.runner_states(deployment_id))


def list_deployments(
    flow_id: str | None, status: str | None, limit: int, cursor: str | None
) -> Page[Deployment]:
    page = store.page(flow_id=flow_id, status=status, limit=limit, cursor=cursor)
    return Page(
        items=[view(r, store.runner_states(r.id)) for r in page.items],
        next_cursor=page.next_cursor,
    )


def list_for_group(group_id: str, limit: int, cursor: str | None) -> Page[Deployment]:

    runner_records.load_group(group_id)
    page = store.page_group_deployment_ids(group_id, limit, cursor)
    return Page(items=[get(i) for i in page.items], next_cursor=page.next_cursor)


def as_runner_sees(flow_id: str, runner_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A Runner's identity and the context it would run `flow_id` with: the deployment running
    the flow for its group, under its group's and its own parameters (for dry runs)."""

    record = runner_records.load_runner(runner_id)
    identity = {"id": record.id, "name": record.name, "group_id": record.group_id}
    deployed: dict[str, Any] = {}
    target = store.group_flow(record.group_id, flow_id)
    if target is not None and (found := store.get(target.deployment_id)) is not None:
        deployed = changes.running(found, record.group_id)[0]
    return identity, {**deployed, **runner_context.effective_context(record)}
