"""Runner groups, Runners and their context parameters. Enrollment is in `runner_enrollment`."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from etikett import clock
from etikett.domain import audit, runner_queues
from etikett.domain.actors import Invocation
from etikett.errors import NotFound, ProblemCode
from etikett.ids import new_id
from etikett.store.base import transaction
from etikett.store.pages import Page, read_page
from etikett.store.runners import (
    GROUP_SK,
    RUNNER_SK,
    ContextRecord,
    GroupRecord,
    RunnerRecord,
    context_sk,
)

ONLINE_WITHIN = timedelta(seconds=90)  # three missed heartbeats make a Runner offline
CONTEXT_NAME = r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"


class RunnerGroup(BaseModel):
    id: str
    name: str
    description: str | None
    created_at: str


class NewRunnerGroup(BaseModel):
    model_config = {"extra": "forbid"}
    name: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=1000)


class Runner(BaseModel):
    id: str
    name: str
    group_id: str
    status: Literal["online", "offline", "pending"]
    last_seen_at: str | None
    version: str | None
    hostname: str | None
    created_at: str


class ContextParameter(BaseModel):
    name: str
    value: Any
    updated_at: str
    updated_by: str


class ContextValue(BaseModel):
    model_config = {"extra": "forbid"}
    value: Any = Field(description="Any JSON value.")


def group_view(record: GroupRecord) -> RunnerGroup:
    return RunnerGroup(
        id=record.pk,
        name=record.name,
        description=record.description,
        created_at=clock.rfc3339(record.created_at),
    )


def status_of(record: RunnerRecord, now: datetime | None = None) -> str:
    if record.state != "active":
        return "pending"
    seen = record.last_seen_at
    return "online" if seen and (now or clock.now()) - seen <= ONLINE_WITHIN else "offline"


def runner_view(record: RunnerRecord) -> Runner:
    return Runner(
        id=record.pk,
        name=record.name,
        group_id=record.group_id,
        status=status_of(record),  # type: ignore[arg-type]
        last_seen_at=clock.rfc3339(record.last_seen_at) if record.last_seen_at else None,
        version=record.version,
        hostname=record.hostname,
        created_at=clock.rfc3339(record.created_at),
    )


# --- groups ----------------------------------------------------------------------------------


def load_group(group_id: str) -> GroupRecord:
    try:
        return GroupRecord.get(group_id, GROUP_SK)
    except GroupRecord.DoesNotExist:
        raise NotFound(
            f"No Runner group {group_id}.", ProblemCode.RUNNER_GROUP_NOT_FOUND, group_id=group_id
        ) from None


def create_group(invocation: Invocation, request: NewRunnerGroup) -> RunnerGroup:
    group_id = new_id("rgp")
    record = GroupRecord(
        pk=group_id,
        sk=GROUP_SK,
        kind="group",
        sort_key=f"{request.name.casefold()}#{group_id}",
        name=request.name,
        description=request.description,
        created_at=clock.now(),
    )
    with transaction() as tx:
        tx.save(record, condition=GroupRecord.pk.does_not_exist())
        tx.save(audit.entry(invocation, group_id, details={"name": request.name}))
    return group_view(record)


def list_groups(limit: int, cursor: str | None) -> Page[RunnerGroup]:
    def query(**page: object) -> object:
        return GroupRecord.by_kind.query("group", **page)

    return read_page(query, {"pk", "sk", "kind", "sort_key"}, limit, cursor, group_view)


# --- runners ---------------------------------------------------------------------------------


def load_runner(runner_id: str) -> RunnerRecord:
    try:
        return RunnerRecord.get(runner_id, RUNNER_SK)
    except RunnerRecord.DoesNotExist:
        raise NotFound(
            f"No Runner {runner_id}.", ProblemCode.RUNNER_NOT_FOUND, runner_id=runner_id
        ) from None


def get_runner(runner_id: str) -> Runner:
    return runner_view(load_runner(runner_id))


def list_runners(limit: int, cursor: str | None, group_id: str | None) -> Page[Runner]:
    if group_id is not None:

        def query(**page: object) -> object:
            return RunnerRecord.by_group.query(group_id, **page)

        return read_page(query, {"pk", "sk", "runner_group"}, limit, cursor, runner_view)

    def query_all(**page: object) -> object:
        return RunnerRecord.by_kind.query("runner", **page)

    return read_page(query_all, {"pk", "sk", "kind", "sort_key"}, limit, cursor, runner_view)


def online_runners(group_id: str) -> list[RunnerRecord]:
    now = clock.now()
    return [r for r in RunnerRecord.by_group.query(group_id) if status_of(r, now) == "online"]


def remove_runner(invocation: Invocation, runner_id: str) -> None:
    """The Runner's certificate stops working at once; its queue and context go with it."""
    record = load_runner(runner_id)
    with transaction() as tx:
        tx.delete(record, condition=RunnerRecord.pk.exists())
        tx.save(
            audit.entry(
                invocation,
                runner_id,
                details={
                    "name": record.name,
                    "group_id": record.group_id,
                    "certificate_serial": record.certificate_serial,
                },
            )
        )
    if record.queue_url:
        runner_queues.delete(record.queue_url)
    for item in ContextRecord.query(runner_id, ContextRecord.sk.startswith("context#")):
        item.delete()
    _fail_open_jobs(runner_id)


def _fail_open_jobs(runner_id: str) -> None:
    """Nobody will run the removed Runner's open jobs: end them, so nothing waits forever."""
    from etikett.domain import jobs
    from etikett.store.jobs import JobRecord

    for record in JobRecord.by_runner.query(runner_id):
        if not jobs.is_final(record):
            jobs.fail(record, "runner_removed", "The Runner was removed before the job ended.")


# --- context parameters ----------------------------------------------------------------------


def _context_view(record: ContextRecord) -> ContextParameter:
    return ContextParameter(
        name=record.name,
        value=record.value,
        updated_at=clock.rfc3339(record.updated_at),
        updated_by=record.updated_by,
    )


def _owner_exists(owner_id: str) -> None:
    if owner_id.startswith("rgp_"):
        load_group(owner_id)
    else:
        load_runner(owner_id)


def list_context(owner_id: str, limit: int, cursor: str | None) -> Page[ContextParameter]:
    _owner_exists(owner_id)

    def query(**page: object) -> object:
        return ContextRecord.query(owner_id, ContextRecord.sk.startswith("context#"), **page)

    return read_page(query, {"pk", "sk"}, limit, cursor, _context_view)


def context_values(owner_id: str) -> dict[str, Any]:
    return {
        r.name: r.value
        for r in ContextRecord.query(owner_id, ContextRecord.sk.startswith("context#"))
    }


def put_context(
    invocation: Invocation, owner_id: str, name: str, request: ContextValue
) -> ContextParameter:
    _owner_exists(owner_id)
    caller = invocation.caller
    assert caller is not None
    before = next(iter(ContextRecord.query(owner_id, ContextRecord.sk == context_sk(name))), None)
    record = ContextRecord(
        pk=owner_id,
        sk=context_sk(name),
        name=name,
        value=request.value,
        updated_at=clock.now(),
        updated_by=caller.subject,
        revision=(before.revision + 1) if before else 1,
    )
    with transaction() as tx:
        tx.save(record)
        tx.save(
            audit.entry(
                invocation,
                owner_id,
                details={
                    "name": name,
                    "before": before.value if before else None,
                    "after": request.value,
                },
            )
        )
    return _context_view(record)


def delete_context(invocation: Invocation, owner_id: str, name: str) -> None:
    _owner_exists(owner_id)
    try:
        record = ContextRecord.get(owner_id, context_sk(name))
    except ContextRecord.DoesNotExist:
        raise NotFound(
            f"No context parameter {name!r}.", ProblemCode.CONTEXT_NOT_FOUND, name=name
        ) from None
    with transaction() as tx:
        tx.delete(record)
        tx.save(audit.entry(invocation, owner_id, details={"name": name, "before": record.value}))


def effective_context(runner: RunnerRecord) -> dict[str, Any]:
    """Group parameters, overridden by the Runner's own (deployment level comes later)."""
    return {**context_values(runner.group_id), **context_values(runner.pk)}
