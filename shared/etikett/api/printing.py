"""Routes of the Printing group: print jobs and the print archive."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Request
from fastapi.responses import JSONResponse

from etikett.api.access import json_body, requires
from etikett.api.pagination import DEFAULT, Cursor, Filter, ItemList, Limit
from etikett.api.routing import router
from etikett.domain.actors import Invocation
from etikett.domain.printing import print_archive, print_targets, printing

routes = router(prefix="/api/v1", tags=["Printing"])


async def _print_targets(request: Request) -> Any:
    """The label version, printer and Runner an earlier print found for the names this request
    gives, to be read with the caller's token: a print's reads in one round trip."""
    body = await json_body(request)  # refused with its reason once the caller is known
    if not isinstance(body, dict):
        return None
    label, printer = body.get("label_id"), body.get("printer")
    if isinstance(label, str) and isinstance(printer, str):
        return print_targets.read_ahead(label, printer)
    return None


Reviewer = Annotated[Invocation, requires("operator", "approver")]


@routes.post(
    "/print",
    operation_id="postPrint",
    response_model=printing.PrintAccepted,
    status_code=202,
    summary="Print a released label version with variables or a data stream on a printer",
    description="Checks the whole request first (label reference, printer, every "
    "record's variables), takes counter values, records one archive entry "
    "per record and hands the job to the printer's Runner. Outcomes "
    "(held, sent, confirmed, failed) appear on the job (getJob), in the "
    "archive and as webhook events. With `idempotency_key`, a retry answers "
    "the first answer, with the job's status as it is now, and prints nothing more.",
    responses={
        404: {"description": "`label.not_found`, `printer.not_found`"},
        409: {
            "description": "`print.label_not_released`, "
            "`print.idempotency_conflict`, `print.in_progress`, "
            "`print.density_mismatch`, `counter.inactive`"
        },
        413: {"description": "More than 10,000 records (`print.too_many_records`)"},
        422: {
            "description": "Invalid request (`request.invalid`, params.fields names each "
            "field), `print.variables_invalid`; the version has error findings "
            "(`label.has_errors`)"
        },
    },
)
def post_print(
    body: printing.PrintRequest,
    invocation: Annotated[Invocation, requires("operator", read_along=_print_targets)],
    request: Request,
) -> Any:
    ahead = getattr(request.state, "read_along", None)
    return JSONResponse(printing.print_request(invocation, body, ahead=ahead), status_code=202)


@routes.get(
    "/print-archive",
    operation_id="listPrintArchive",
    response_model=ItemList[print_archive.ArchiveEntry],
    summary="The print archive, newest first (or a job's labels in print order)",
)
def list_archive(
    invocation: Reviewer,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
    label_id: Filter = None,
    job_id: Filter = None,
) -> ItemList[print_archive.ArchiveEntry]:
    page = print_archive.list_entries(limit, cursor, label_id=label_id, job_id=job_id)
    return ItemList[print_archive.ArchiveEntry].of(page)


@routes.get(
    "/print-archive/{entryId}",
    operation_id="getPrintArchiveEntry",
    response_model=print_archive.ArchiveEntry,
    summary="One print-archive entry",
    responses={404: {"description": "Unknown entry (`archive.not_found`)"}},
)
def get_archive_entry(entryId: str, invocation: Reviewer) -> print_archive.ArchiveEntry:
    return print_archive.get_entry(entryId)
