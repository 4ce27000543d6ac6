"""Runner groups, Runners and their context parameters. Enrollment is in `runner_enrollment`;
what other aggregates read of Runners (loading, status, printer ports) in `runner_records`."""

import logging
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.runners import runner_notices
from etikett.domain.runners.runner_context import context_values
from etikett.domain.runners.runner_records import load_group, load_runner, status_of
from etikett.ids import new_id
from etikett.store import runner_context, runner_queues, runners
from etikett.store import runner_wakes as wake_store
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page
from etikett.store.runner_context import ContextRecord
from etikett.store.runners import GroupRecord, RunnerRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import NotFound, ProblemCode
from etikett_engine.model import Model

log = logging.getLogger(__name__)

CONTEXT_NAME = r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$"
# Below 1024 live services, not printers (LPD's 515 is among the defaults already).
ExtraPort = Annotated[int, Field(ge=1024, le=65535)]


class RunnerGroup(Model):
    id: str
    name: str
    description: str | None
    printer_ports: list[int] = Field(
        description="Ports this group's printers may use besides 9100, 6101 and 515."
    )
    created_at: str


class NewRunnerGroup(Model):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=200)
    description: str | None = Field(default=None, max_length=1000)
    printer_ports: list[ExtraPort] = Field(
        default_factory=list,
        max_length=20,
        description="Ports the group's printers may use besides 9100, 6101 and 515 (1024-65535).",
    )


class PrinterPorts(Model):
    model_config = ConfigDict(extra="forbid")
    ports: list[ExtraPort] = Field(
        max_length=20,
        description="Ports the group's printers may use besides 9100, 6101 and 515 (1024-65535); "
        "an empty list allows those three only.",
    )


class Runner(Model):
    id: str
    name: str
    group_id: str
    status: Literal["online", "offline", "pending"]
    last_seen_at: str | None
    status_since: str | None = Field(
        default=None, description="Online since (its return) or offline since (last seen)."
    )
    unsynced_offline_labels: int = Field(
        default=0, description="Labels it printed without the service, not synced yet."
    )
    oldest_unsynced_at: str | None = Field(
        default=None, description="When the oldest of those was printed."
    )
    version: str | None
    hostname: str | None
    created_at: str


class ContextParameter(Model):
    name: str
    value: Any
    updated_at: str
    updated_by: str


class ContextValue(Model):
    model_config = ConfigDict(extra="forbid")
    value: Any = Field(description="Any JSON value.")


def group_view(record: GroupRecord) -> RunnerGroup:
    return RunnerGroup(
        id=record.id,
        name=record.name,
        description=record.description,
        printer_ports=sorted(int(port) for port in record.printer_ports),
        created_at=clock.rfc3339(record.created_at),
    )


def runner_view(record: RunnerRecord) -> Runner:
    status = status_of(record)
    since = {
        "online": record.online_since or record.process_started_at,
        "offline": record.last_seen_at,
    }.get(status)
    report = record.offline_report or {}
    return Runner(
        id=record.id,
        name=record.name,
        group_id=record.group_id,
        status=status,
        last_seen_at=clock.rfc3339(record.last_seen_at) if record.last_seen_at else None,
        status_since=clock.rfc3339(since) if since else None,
        unsynced_offline_labels=int(report.get("unsynced_labels") or 0),
        oldest_unsynced_at=report.get("oldest_unsynced_at"),
        version=record.version,
        hostname=record.hostname,
        created_at=clock.rfc3339(record.created_at),
    )


# --- groups ----------------------------------------------------------------------------------


def create_group(invocation: Invocation, request: NewRunnerGroup) -> RunnerGroup:
    group_id = new_id("rgp")
    ports = tuple(sorted(set(request.printer_ports)))
    record = GroupRecord(
        id=group_id,
        name=request.name,
        description=request.description,
        created_at=clock.now(),
        printer_ports=ports,
    )
    details = {"name": request.name, "printer_ports": list(ports)}
    with UnitOfWork(audit.record(invocation, group_id, details=details)) as uow:
        runners.add_group(uow, record)
    return group_view(record)


def set_printer_ports(invocation: Invocation, group_id: str, request: PrinterPorts) -> RunnerGroup:
    """The ports an admin allows the group's printers besides the printer ports: what its
    Runners may connect to (on private addresses only), so the change is audited."""
    before = load_group(group_id)
    after = before._replace(printer_ports=tuple(sorted(set(request.ports))))
    if after == before:
        return group_view(before)
    details = {"before": list(before.printer_ports), "after": list(after.printer_ports)}
    gone = NotFound(
        f"No Runner group {group_id}.", ProblemCode.RUNNER_GROUP_NOT_FOUND, group_id=group_id
    )
    with UnitOfWork(
        audit.record(invocation, group_id, details=details),
        errors={ConditionName.GROUP_EXISTS: gone},
    ) as uow:
        runners.update_group(uow, before, after)
    runner_notices.groups_changed([group_id])
    return group_view(after)


def list_groups(limit: int, cursor: str | None) -> Page[RunnerGroup]:
    found = runners.page_groups(limit, cursor)
    return Page(items=[group_view(r) for r in found.items], next_cursor=found.next_cursor)


# --- runners ---------------------------------------------------------------------------------


def get_runner(runner_id: str) -> Runner:
    return runner_view(load_runner(runner_id))


def list_runners(limit: int, cursor: str | None, group_id: str | None) -> Page[Runner]:
    found = runners.page_runners(limit, cursor, group_id)
    return Page(items=[runner_view(r) for r in found.items], next_cursor=found.next_cursor)


def remove_runner(invocation: Invocation, runner_id: str) -> None:
    """The Runner's certificate stops working at once; its queue and context go with it.
    Its open jobs are ended by the caller (`jobs.end_open_jobs_of`)."""
    record = load_runner(runner_id)
    details = {
        "name": record.name,
        "group_id": record.group_id,
        "certificate_serial": record.certificate_serial,
    }
    with UnitOfWork(audit.record(invocation, runner_id, details=details)) as uow:
        runners.delete_runner(uow, record)
    if record.queue_url:
        runner_queues.delete(record.queue_url)
    if record.wake_certificate_id:  # IoT Core closes its connection to the wake broker
        try:
            wake_store.deactivate(record.wake_certificate_id)
        except Exception:  # its queue is gone: a wake it still hears leads nowhere
            log.warning("Runner %s: IoT certificate not deactivated", runner_id, exc_info=True)
    runner_context.delete_context_of(runner_id)


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
    found = runner_context.page_context(owner_id, limit, cursor)
    return Page(items=[_context_view(r) for r in found.items], next_cursor=found.next_cursor)


def put_context(
    invocation: Invocation, owner_id: str, name: str, request: ContextValue
) -> ContextParameter:
    # Loaded here, not at the deployments, mcp and runners functions' cold start.
    from etikett.domain.runners import context_limits

    _owner_exists(owner_id)
    caller = invocation.caller
    assert caller is not None
    context_limits.check_put(owner_id, context_values(owner_id), name, request.value)
    before = runner_context.get_context(owner_id, name)
    record = ContextRecord(
        owner_id=owner_id,
        name=name,
        value=request.value,
        updated_at=clock.now(),
        updated_by=caller.subject,
        revision=(before.revision + 1) if before else 1,
    )
    details = {"name": name, "before": before.value if before else None, "after": request.value}
    with UnitOfWork(audit.record(invocation, owner_id, details=details)) as uow:
        runner_context.put_context(uow, record)
    runner_notices.owner_changed(owner_id)
    return _context_view(record)


def delete_context(invocation: Invocation, owner_id: str, name: str) -> None:
    _owner_exists(owner_id)
    record = runner_context.get_context(owner_id, name)
    if record is None:
        raise NotFound(f"No context parameter {name!r}.", ProblemCode.CONTEXT_NOT_FOUND, name=name)
    details = {"name": name, "before": record.value}
    with UnitOfWork(audit.record(invocation, owner_id, details=details)) as uow:
        runner_context.delete_context(uow, record)
    runner_notices.owner_changed(owner_id)
