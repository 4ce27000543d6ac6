"""Routes of the Printers group (deployment printer assignments come with deployments)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Response

from etikett.api.access import any_caller, requires
from etikett.api.pagination import DEFAULT, Cursor, Filter, ItemList, Limit
from etikett.api.routing import router
from etikett.domain.actors import Invocation
from etikett.domain.agent import discovery
from etikett.domain.printers import printers

routes = router(prefix="/api/v1/printers", tags=["Printers"])
Operator = Annotated[Invocation, requires("operator")]


@routes.get(
    "",
    operation_id="listPrinters",
    response_model=ItemList[printers.Printer],
    summary="Known print targets by name, with their last reported status",
)
def list_printers(
    invocation: Annotated[Invocation, any_caller()],
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
    runner_id: Filter = None,
) -> ItemList[printers.Printer]:
    return ItemList[printers.Printer].of(printers.list_printers(limit, cursor, runner_id))


@routes.post(
    "",
    operation_id="createPrinter",
    response_model=printers.Printer,
    status_code=201,
    summary="Adopt a discovery finding (or declare a printer) as a named print target",
    responses={
        404: {"description": "`finding.not_found`, `runner.not_found`"},
        409: {"description": "Name taken (`printer.name_taken`)"},
        422: {
            "description": "Not a private or link-local address on a printer port "
            "(`printer.address_refused`)"
        },
    },
)
def create_printer(body: printers.NewPrinter, invocation: Operator) -> printers.Printer:
    return printers.create(invocation, body)


@routes.post(
    "/discover",
    operation_id="postPrintersDiscover",
    response_model=discovery.DiscoveryJobs,
    status_code=202,
    summary="Search for printers at every online Runner of a group",
    responses={
        409: {"description": "No Runner online (`runner_group.no_online_runner`)"},
        422: {
            "description": "Invalid request (`request.invalid`, params.fields names each "
            "field); a target the Runners may not probe (`printer.address_refused`)"
        },
        429: {
            "description": "Every online Runner discovered a moment ago "
            "(`runner.discovery_throttled`)"
        },
    },
)
def discover(
    body: discovery.GroupDiscoveryRequest, invocation: Operator
) -> discovery.DiscoveryJobs:
    return discovery.discover_in_group(invocation, body)


@routes.delete(
    "/{printerId}",
    operation_id="deletePrinter",
    status_code=204,
    summary="Remove an adopted print target",
    description="Refused (409 `printer.in_use`, params.deployment_ids) while a deployment that "
    "is not rolled back or superseded assigns the printer to an alias.",
    responses={
        404: {"description": "Unknown printer (`printer.not_found`)"},
        409: {"description": "A deployment assigns it (`printer.in_use`)"},
    },
)
def delete_printer(printerId: str, invocation: Operator) -> Response:
    printers.delete(invocation, printerId)
    return Response(status_code=204)
