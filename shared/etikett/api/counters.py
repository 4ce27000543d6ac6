"""Routes of the Counters group: serial sequences for labels."""

from __future__ import annotations

from typing import Annotated

from etikett.api.access import any_caller, requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import Responses, router
from etikett.domain.actors import Invocation
from etikett.domain.counters import counters

routes = router(prefix="/api/v1/counters", tags=["Counters"])
Anyone = Annotated[Invocation, any_caller()]
_NOT_FOUND: Responses = {404: {"description": "Unknown counter (`counter.not_found`)"}}


@routes.get(
    "",
    operation_id="listCounters",
    response_model=ItemList[counters.Counter],
    summary="List counters by name",
)
def list_counters(
    invocation: Anyone, limit: Limit = DEFAULT, cursor: Cursor = None
) -> ItemList[counters.Counter]:
    return ItemList[counters.Counter].of(counters.list_counters(limit, cursor))


@routes.post(
    "",
    operation_id="createCounter",
    response_model=counters.Counter,
    status_code=201,
    summary="Create a counter sequence (labels read it as counters.<name>)",
    responses={409: {"description": "Name taken (`counter.exists`)"}},
)
def create_counter(
    body: counters.NewCounter,
    invocation: Annotated[Invocation, requires("designer", "operator")],
) -> counters.Counter:
    return counters.create(invocation, body)


@routes.get(
    "/{name}",
    operation_id="getCounter",
    response_model=counters.Counter,
    summary="Read a counter's state",
    responses=_NOT_FOUND,
)
def get_counter(name: str, invocation: Anyone) -> counters.Counter:
    return counters.get(name)


@routes.post(
    "/{name}/deactivate",
    operation_id="postCounterDeactivate",
    response_model=counters.Counter,
    summary="Retire a counter: prints that need it are refused",
    responses=_NOT_FOUND,
)
def deactivate(
    name: str,
    invocation: Annotated[Invocation, requires("operator")],
) -> counters.Counter:
    return counters.deactivate(invocation, name)
