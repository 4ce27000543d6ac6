"""Print targets: printers adopted from discovery findings (or declared by hand), and discovery
itself, which Runners do on their local networks.

A Runner is never a general proxy into the customer's network: printer URIs and discovery targets
are private or link-local addresses (or host names, which the Runner resolves and checks again on
its side) on printer ports — 9100, 6101, 515 and those an admin allows the Runner's group;
loopback only where `LoopbackPrinters` allows it (local mode, for the printer simulator), on any
port. Raw jobs carry printer-language data only (`etikett.printer_data`), and a Runner discovers
at most `discovery_burst` times at once, then once per `discovery_interval_seconds`."""

from __future__ import annotations

import base64
import ipaddress
import math
import re
from datetime import timedelta
from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from etikett import clock, printer_data
from etikett.domain import audit, jobs, runners
from etikett.domain.actors import Invocation
from etikett.errors import Conflict, InvalidRequest, NotFound, ProblemCode, Throttled
from etikett.ids import new_id
from etikett.model import Model
from etikett.settings import get_settings
from etikett.store import printers
from etikett.store import runners as runner_store
from etikett.store.pages import Page
from etikett.store.printers import FindingRecord, PrinterName, PrinterRecord
from etikett.store.unit_of_work import UnitOfWork

Language = Literal["zpl", "tspl", "epl"]
URI = re.compile(r"^tcp://(?P<host>[A-Za-z0-9.\-]{1,253}|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})$")
FINDING_LIFETIME = timedelta(days=7)
MAX_ADDRESSES = 256


class Printer(Model):
    id: str
    name: str
    runner_id: str
    uri: str
    language: Language
    dpi: int
    model: str | None
    status: str | None = Field(description="As the Runner last reported it: ready, paper_out, …")
    status_at: str | None = None
    created_at: str


class NewPrinter(Model):
    """Adopt a finding (`finding_id`, `name`) or declare a printer (`name`, `runner_id`, `uri`,
    `language`, `dpi`)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=100, pattern=r"^[^\s/][^/]*$")
    finding_id: str | None = None
    runner_id: str | None = None
    uri: str | None = Field(default=None, examples=["tcp://192.168.1.50:9100"])
    language: Language | None = None
    dpi: Literal[203, 300, 600] | None = None
    model: str | None = Field(default=None, max_length=200)

    @model_validator(mode="after")
    def _one_way(self) -> NewPrinter:
        declared = (self.runner_id, self.uri, self.language, self.dpi)
        if self.finding_id is None and any(v is None for v in declared):
            raise ValueError("give finding_id, or runner_id, uri, language and dpi")
        if self.finding_id is not None and any(v is not None for v in declared):
            raise ValueError("give finding_id or the printer's details, not both")
        if self.uri is not None and not URI.match(self.uri):
            raise ValueError("uri must look like tcp://host:9100")
        return self


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


def expand_targets(targets: list[str], *, count_only: bool = False) -> list[str]:
    """Validate the targets' form: host, host:port, [v6]:port or an IPv4 CIDR of at most /24,
    at most 256 addresses in all. Whether the Runner may reach them is `check_targets`."""
    total = 0
    for target in targets:
        host, port = _split_target(target)
        if port is not None and not 0 < port < 65536:
            raise ValueError(f"{target!r}: bad port")
        if "/" in host:
            try:
                network = ipaddress.ip_network(host, strict=False)
            except ValueError:
                raise ValueError(f"{target!r}: not a CIDR") from None
            if network.version != 4 or network.prefixlen < 24:
                raise ValueError(f"{target!r}: a CIDR may span at most a /24")
            total += network.num_addresses
        else:
            if _literal(host) is None and not HOSTNAME.fullmatch(host):
                raise ValueError(f"{target!r}: not a host name or address")
            total += 1
    if total > MAX_ADDRESSES:
        raise ValueError(f"the targets cover {total} addresses; at most {MAX_ADDRESSES}")
    return targets


HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.\-]{0,251}[A-Za-z0-9])?")


def _split_target(target: str) -> tuple[str, int | None]:
    text = target.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    if port and not port.isdigit():
        raise ValueError(f"{target!r}: bad port")
    return host, int(port) if port else None


def _literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def address_refusal(host: str, port: int, allowed_ports: frozenset[int]) -> str | None:
    """Why a Runner must not connect to host:port as a printer, or None. A host name passes
    here (on its port): the Runner resolves it and checks what it resolves to."""
    literal = _literal(host)
    if isinstance(literal, ipaddress.IPv6Address) and literal.ipv4_mapped is not None:
        literal = literal.ipv4_mapped
    if literal is not None:
        if literal.is_loopback:
            if get_settings().loopback_printers:
                return None  # the printer simulator, on whatever port it listens
            return "a loopback address (printers there only in local mode: LoopbackPrinters)"
        if literal.is_multicast or literal.is_unspecified or literal.is_reserved:
            return "not a unicast address"
        if not (literal.is_private or literal.is_link_local):
            return "not a private or link-local address: a Runner reaches its own network only"
    elif host.lower().rstrip(".") == "localhost" and not get_settings().loopback_printers:
        return "a loopback name (printers there only in local mode: LoopbackPrinters)"
    if port not in allowed_ports:
        return (
            f"port {port} is not a printer port ({', '.join(map(str, sorted(allowed_ports)))}; "
            "an admin may allow more for the Runner's group)"
        )
    return None


def _refused(where: str, reason: str, **params: Any) -> InvalidRequest:
    return InvalidRequest(
        f"{where} is refused: {reason}.",
        ProblemCode.PRINTER_ADDRESS_REFUSED,
        reason=reason,
        **params,
    )


def check_uri(uri: str, allowed_ports: frozenset[int]) -> None:
    match = URI.match(uri)
    if match is None:
        raise InvalidRequest.field("body.uri", "uri must look like tcp://host:9100")
    reason = address_refusal(match["host"], int(match["port"]), allowed_ports)
    if reason is not None:
        raise _refused(f"The printer {uri}", reason, uri=uri)


def check_targets(targets: list[str], allowed_ports: frozenset[int]) -> None:
    """Every address a discovery may probe is one a Runner may reach (every address of a CIDR:
    a /24 that reaches into a public network is refused whole)."""
    for target in targets:
        host, port = _split_target(target)
        port = port if port is not None else 9100
        hosts = [host]
        if "/" in host:
            network = ipaddress.ip_network(host, strict=False)
            hosts = [str(network.network_address), str(network.broadcast_address)]
        for each in hosts:
            reason = address_refusal(each, port, allowed_ports)
            if reason is not None:
                raise _refused(f"The discovery target {target}", reason, target=target)


def view(record: PrinterRecord) -> Printer:
    return Printer(
        id=record.id,
        name=record.name,
        runner_id=record.runner_id,
        uri=record.uri,
        language=record.language,
        dpi=record.dpi,
        model=record.model,
        status=record.status,
        status_at=clock.rfc3339(record.status_at) if record.status_at else None,
        created_at=clock.rfc3339(record.created_at),
    )


def target(record: PrinterRecord) -> dict[str, Any]:
    """What a Runner needs to reach the printer."""
    return {
        "printer_id": record.id,
        "name": record.name,
        "uri": record.uri,
        "language": record.language,
        "dpi": record.dpi,
    }


def load(printer_id: str) -> PrinterRecord:
    return existing(printer_id, printers.get(printer_id) if printer_id.startswith("prn_") else None)


def existing(printer_id: str, record: PrinterRecord | None) -> PrinterRecord:
    """`record` as read for `printer_id`; printer.not_found if there was none."""
    if record is None or not printer_id.startswith("prn_"):
        raise NotFound(
            f"No printer {printer_id}.", ProblemCode.PRINTER_NOT_FOUND, printer_id=printer_id
        )
    return record


def by_name(name: str) -> PrinterRecord:
    return load(named(name, printers.get_name(name)).printer_id)


def named(name: str, claim: PrinterName | None) -> PrinterName:
    """`claim` as read for `name`; printer.not_found if there was none."""
    if claim is None:
        raise NotFound(f"No printer named {name!r}.", ProblemCode.PRINTER_NOT_FOUND, name=name)
    return claim


def list_printers(limit: int, cursor: str | None, runner_id: str | None) -> Page[Printer]:
    found = printers.page(limit, cursor, runner_id)
    return Page(items=[view(record) for record in found.items], next_cursor=found.next_cursor)


def create(invocation: Invocation, request: NewPrinter) -> Printer:
    if request.finding_id is not None:
        finding = printers.get_finding(request.finding_id)
        if finding is None:
            raise NotFound(
                f"No discovery finding {request.finding_id}.",
                ProblemCode.FINDING_NOT_FOUND,
                finding_id=request.finding_id,
            )
        host, _, port = finding.address.rpartition(":")
        runner_id, uri = finding.runner_id, f"tcp://{host}:{port or 9100}"
        language, dpi, model = finding.language, finding.dpi or 203, finding.model
    else:
        runner_id, uri = str(request.runner_id), str(request.uri)
        language, dpi, model = str(request.language), int(request.dpi or 203), request.model
    runner = runners.load_runner(runner_id)
    check_uri(uri, runners.printer_ports(runner.group_id))
    if runner.state != "active":
        raise Conflict(
            "The Runner is not admitted yet.", ProblemCode.RUNNER_NOT_ACTIVE, runner_id=runner_id
        )
    printer_id = new_id("prn")
    record = PrinterRecord(
        id=printer_id,
        name=request.name,
        runner_id=runner_id,
        uri=uri,
        language=language,
        dpi=dpi,
        model=model,
        firmware=None,
        status=None,
        status_at=None,
        finding_id=request.finding_id,
        created_at=clock.now(),
    )
    details = {
        "name": request.name,
        "runner_id": runner_id,
        "uri": uri,
        "finding_id": request.finding_id,
    }
    taken = Conflict(
        f"A printer is already named {request.name!r}.",
        ProblemCode.PRINTER_NAME_TAKEN,
        name=request.name,
    )
    entry = audit.record(invocation, printer_id, details=details)
    with UnitOfWork(entry, errors={"printer.name_free": taken}) as uow:
        printers.add(uow, record)
    return view(record)


def delete(invocation: Invocation, printer_id: str) -> None:
    """Refused while a deployment (not rolled back or superseded) assigns the printer."""
    from etikett.store import deployments

    record = load(printer_id)
    rev = printers.assigned_rev(printer_id)  # read before the deployments: see the condition
    users = deployments.live_assigning(printer_id)
    in_use = Conflict(
        f"{record.name!r} ({printer_id}) is assigned by the deployments "
        f"{', '.join(users) or '(assigned meanwhile)'}; reassign their aliases "
        "(putDeploymentPrinter) or roll them back first.",
        ProblemCode.PRINTER_IN_USE,
        printer_id=printer_id,
        deployment_ids=users,
    )
    if users:
        raise in_use
    details = {"name": record.name, "uri": record.uri}
    entry = audit.record(invocation, printer_id, details=details)
    with UnitOfWork(entry, errors={"printer.unassigned": in_use}) as uow:
        printers.delete(uow, record, assigned_rev=rev)


def submit_raw(invocation: Invocation, runner_id: str, request: jobs.RawJobRequest) -> jobs.Job:
    """Raw bytes for one of the Runner's printers."""
    printer = load(request.printer_id)
    if printer.runner_id != runner_id:
        raise InvalidRequest.field("body.printer_id", f"the printer belongs to {printer.runner_id}")
    try:
        data = base64.b64decode(request.data_base64, validate=True)
    except ValueError:
        raise InvalidRequest.field("body.data_base64", "not valid base64") from None
    refused = printer_data.refusal(data, printer.language)
    if refused is not None:
        raise InvalidRequest(
            f"The data is not {printer.language.upper()} for a printer: {refused}.",
            ProblemCode.JOB_NOT_PRINTER_DATA,
            reason=refused,
            language=printer.language,
        )
    payload = {"printer": target(printer), "expected_labels": request.expected_labels}
    return jobs.submit(
        invocation,
        runner_id,
        "raw",
        payload,
        printer_id=printer.id,
        data=data,
        audit_details={"bytes": len(data)},
    )


def discover_at(invocation: Invocation, runner_id: str, request: DiscoveryRequest) -> jobs.Job:
    runner = runners.load_runner(runner_id)
    check_targets(request.targets, runners.printer_ports(runner.group_id))
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
    runners.load_group(request.group_id)
    check_targets(request.targets, runners.printer_ports(request.group_id))
    online = runners.online_runners(request.group_id)
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


def update_status(runner_id: str, statuses: list[dict[str, Any]]) -> None:
    now = clock.now()
    for item in statuses[:100]:
        printer_id = str(item.get("printer_id", ""))
        if printer_id.startswith("prn_"):
            printers.report_status(
                runner_id, printer_id, _text(item.get("status")) or "unknown", now
            )
