"""Print targets: printers adopted from discovery findings (`discovery`) or declared by hand, on
addresses a Runner may reach (`printer_addresses`), listed and deleted. A printer's record as
other aggregates read it, and the status Runners report, are in `printer_records`; raw jobs to a
printer in `raw_jobs`."""

from typing import Literal, Self

from pydantic import ConfigDict, Field, model_validator

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.printers import printer_records
from etikett.domain.printers.printer_addresses import URI, check_uri
from etikett.domain.runners import runner_notices, runner_records
from etikett.ids import new_id
from etikett.store import printers
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page
from etikett.store.printers import PrinterRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, NotFound, ProblemCode
from etikett_engine.model import Model

Language = Literal["zpl", "tspl", "epl"]


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
    def _one_way(self) -> Self:
        declared = (self.runner_id, self.uri, self.language, self.dpi)
        if self.finding_id is None and any(v is None for v in declared):
            raise ValueError("give finding_id, or runner_id, uri, language and dpi")
        if self.finding_id is not None and any(v is not None for v in declared):
            raise ValueError("give finding_id or the printer's details, not both")
        if self.uri is not None and not URI.match(self.uri):
            raise ValueError("uri must look like tcp://host:9100")
        return self


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
    runner = runner_records.load_runner(runner_id)
    check_uri(uri, runner_records.printer_ports(runner.group_id))
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
    with UnitOfWork(entry, errors={ConditionName.PRINTER_NAME_FREE: taken}) as uow:
        printers.add(uow, record)
    runner_notices.runner_changed(runner_id)
    return view(record)


def delete(invocation: Invocation, printer_id: str) -> None:
    """Refused while a deployment (not rolled back or superseded) assigns the printer."""
    # Loaded here, not at the mcp and printers functions' cold start.
    from etikett.store import deployments

    record = printer_records.load(printer_id)
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
    with UnitOfWork(entry, errors={ConditionName.PRINTER_UNASSIGNED: in_use}) as uow:
        printers.delete(uow, record, assigned_rev=rev)
    runner_notices.runner_changed(record.runner_id)
