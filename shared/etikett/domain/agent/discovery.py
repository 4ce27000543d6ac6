"""Printer discovery, which Runners do on their local networks: asking one Runner or every online
Runner of a group to probe targets (each target checked by `printer_addresses`), the throttle
that keeps it from becoming a port scan (`discovery_burst` at once, then one per
`discovery_interval_seconds`), and the findings a Runner reports, which createPrinter adopts."""

import math
from datetime import timedelta
from typing import Any

from pydantic import ConfigDict, Field, field_validator

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.printers.printer_addresses import MAX_ADDRESSES, check_targets, expand_targets
from etikett.domain.printing import jobs
from etikett.domain.runners import runner_records
from etikett.ids import new_id
from etikett.settings import get_settings
from etikett.store import printers
from etikett.store import runners as runner_store
from etikett.store.pages import Page
from etikett.store.printers import FindingRecord
from etikett_engine.errors import Conflict, ProblemCode, Throttled
from etikett_engine.model import Model

FINDING_LIFETIME = timedelta(days=7)


class DiscoveryRequest(Model):
    model_config = ConfigDict(extra="forbid")
    targets: list[str] = Field(
        min_length=1,
        max_length=32,
        description="host, host:port or an IPv4 CIDR of at most /24 "
        "(port 9100 by default), on the Runner's network: private or link-local addresses "
        "on printer ports (9100, 6101, 515 and those the group allows).",
    )

    @field_validator("targets")
    @classmethod
    def _valid_targets(cls, targets: list[str]) -> list[str]:
        return [str(t) for t in expand_targets(targets, count_only=True)]


class GroupDiscoveryRequest(DiscoveryRequest):
    group_id: str


class DiscoveryJobs(Model):
    jobs: list[jobs.Job]


class Finding(Model):
    """A printer a Runner's discovery found; createPrinter `{"finding_id", "name"}` adopts it."""

    id: str = Field(description="The finding_id createPrinter adopts (fnd_…).")
    runner_id: str
    job_id: str = Field(description="The discovery job that found it (getJob).")
    address: str = Field(description="host:port on the Runner's network.")
    model: str | None
    firmware: str | None
    dpi: int | None
    status: str | None
    found_at: str
    expires_at: str = Field(description="Adopt it before this; a new discovery finds it again.")


def list_findings(runner_id: str, limit: int, cursor: str | None) -> Page[Finding]:
    """The Runner's findings of the last week, newest first."""
    runner_records.load_runner(runner_id)  # 404 for a Runner that does not exist
    now = clock.now()
    page = printers.page_findings(runner_id, limit, cursor, now)
    return Page(
        items=[
            Finding(
                id=f.id,
                runner_id=f.runner_id,
                job_id=f.job_id,
                address=f.address,
                model=f.model,
                firmware=f.firmware,
                dpi=f.dpi,
                status=f.status,
                found_at=clock.rfc3339(f.found_at),
                expires_at=clock.rfc3339(f.found_at + FINDING_LIFETIME),
            )
            for f in page.items
        ],
        next_cursor=page.next_cursor,
    )


def discover_at(invocation: Invocation, runner_id: str, request: DiscoveryRequest) -> jobs.Job:
    runner = runner_records.load_runner(runner_id)
    check_targets(request.targets, runner_records.printer_ports(runner.group_id))
    _take_discovery_turn(runner_id)
    return jobs.submit(
        invocation,
        runner_id,
        "discovery",
        {"targets": request.targets},
        audit_details={"targets": request.targets},
    )


def _take_discovery_turn(runner_id: str) -> None:
    """Even on private addresses discovery is a port scan: a Runner gets `discovery_burst`
    discoveries at once, then one per `discovery_interval_seconds` (429 otherwise). Kept as the
    time its discoveries are booked up to, moved by one conditional write per discovery (the
    generic cell rate algorithm), so concurrent requests cannot book the same turn."""
    settings = get_settings()
    interval = timedelta(seconds=settings.discovery_interval_seconds)
    slack = interval * (settings.discovery_burst - 1)
    for _ in range(25):
        now = clock.now()
        seen = runner_store.discovery_schedule(runner_id)
        start = max(seen, now) if seen is not None else now
        if start - now > slack:
            wait = max(1, math.ceil((start - now - slack).total_seconds()))
            raise Throttled(
                f"Runner {runner_id} discovered a moment ago; it may again in {wait} s.",
                retry_after=wait,
                code=ProblemCode.RUNNER_DISCOVERY_THROTTLED,
                runner_id=runner_id,
            )
        if runner_store.book_discovery(runner_id, seen, start + interval):
            return
    raise Throttled(
        f"Too many discoveries for Runner {runner_id} at once.",
        retry_after=1,
        code=ProblemCode.RUNNER_DISCOVERY_THROTTLED,
        runner_id=runner_id,
    )


def discover_in_group(invocation: Invocation, request: GroupDiscoveryRequest) -> DiscoveryJobs:
    """Discovery on every online Runner of the group that may discover now; 429 when none may."""
    runner_records.load_group(request.group_id)
    check_targets(request.targets, runner_records.printer_ports(request.group_id))
    online = runner_records.online_runners(request.group_id)
    if not online:
        raise Conflict(
            "No Runner of the group is online.",
            ProblemCode.RUNNER_GROUP_NO_ONLINE_RUNNER,
            group_id=request.group_id,
        )
    submitted: list[jobs.Job] = []
    throttled: list[Throttled] = []
    for runner in online:
        try:
            submitted.append(discover_at(invocation, runner.id, request))
        except Throttled as error:
            throttled.append(error)
    if not submitted:
        raise min(throttled, key=lambda error: int(error.params["retry_after"]))
    return DiscoveryJobs(jobs=submitted)


def record_findings(
    runner_id: str, job_id: str, findings: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Give each finding an id for createPrinter; answers the findings as the job's result."""
    now = clock.now()
    stored = []
    for finding in findings[:MAX_ADDRESSES]:
        dpi = finding.get("dpi")
        stored.append(
            FindingRecord(
                id=new_id("fnd"),
                runner_id=runner_id,
                job_id=job_id,
                address=str(finding.get("address", ""))[:300],
                model=_text(finding.get("model")),
                firmware=_text(finding.get("firmware")),
                dpi=int(dpi) if isinstance(dpi, int) and dpi in (152, 203, 300, 600) else None,
                status=_text(finding.get("status")),
                language="zpl",
                found_at=now,
            )
        )
    printers.add_findings(stored, expires=now + FINDING_LIFETIME)
    return [
        {
            "id": f.id,
            "address": f.address,
            "model": f.model,
            "firmware": f.firmware,
            "dpi": f.dpi,
            "status": f.status,
        }
        for f in stored
    ]


def _text(value: Any) -> str | None:
    return str(value)[:200] if value is not None else None
