"""Routes are declared at import and built by FastAPI on first use: a request builds only the route
it reaches, the 404/405 answers build none, and a built route is what FastAPI's own constructor
makes of the same declaration (the OpenAPI document, built from every route, stays the same)."""

from __future__ import annotations

import threading
import warnings
from typing import Annotated, Any

import pytest
from fastapi import APIRouter, Query
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from pydantic import BaseModel
from pydantic_core import core_schema

from etikett.api.access import any_caller, public
from etikett.api.app import create_app
from etikett.api.groups import GROUPS, routes_of
from etikett.api.routing import EtikettRoute, router
from etikett.domain.actors import Invocation
from etikett_engine.model import Model

Anyone = Annotated[Invocation, public()]


class Greeting(BaseModel):
    text: str
    times: int


def _routes() -> APIRouter:
    routes = router(prefix="/api/v1", tags=["Probe"])

    @routes.get("/greetings/{name}", operation_id="getGreeting", response_model=Greeting)
    def get_greeting(
        name: str, invocation: Anyone, times: Annotated[int, Query(ge=1, le=3)] = 1
    ) -> Greeting:
        return Greeting(text=f"Hello {name}", times=times)

    @routes.post("/greetings", operation_id="postGreeting", status_code=201)
    def post_greeting(body: Greeting, invocation: Anyone) -> Greeting:
        return body

    @routes.delete("/greetings/{name}", operation_id="deleteGreeting", status_code=204)
    def delete_greeting(name: str, invocation: Anyone) -> None:
        return None

    return routes


def _built(routes: APIRouter) -> dict[str, bool]:
    return {str(r.operation_id): r.built for r in routes.routes if isinstance(r, EtikettRoute)}


def test_a_request_builds_only_the_route_it_reaches() -> None:
    routes = _routes()
    client = TestClient(create_app(routes))
    assert _built(routes) == {"getGreeting": False, "postGreeting": False, "deleteGreeting": False}

    answer = client.get("/api/v1/greetings/ada", params={"times": 2})
    assert answer.status_code == 200
    assert answer.json() == {"text": "Hello ada", "times": 2}
    assert _built(routes) == {"getGreeting": True, "postGreeting": False, "deleteGreeting": False}

    # Validation, 404 and 405 are answered as before, without building the other routes.
    assert client.get("/api/v1/greetings/ada", params={"times": 9}).status_code == 422
    assert client.get("/api/v1/nowhere").status_code == 404
    refused = client.put("/api/v1/greetings/ada")
    assert refused.status_code == 405
    assert refused.headers["allow"] == "DELETE, GET"
    assert _built(routes) == {"getGreeting": True, "postGreeting": False, "deleteGreeting": False}

    assert client.post("/api/v1/greetings", json={"text": "hi", "times": 1}).status_code == 201
    assert _built(routes)["postGreeting"]


def test_a_built_route_is_what_fastapi_makes_of_the_declaration() -> None:
    """Everything FastAPI's constructor sets is either set by the declaration or built on first
    read (`BUILT_ATTRIBUTES`): a FastAPI release that adds a part fails here, not in production."""
    declared = {
        r.operation_id: r for r in _routes().routes if isinstance(r, EtikettRoute) and not r.built
    }
    for route in declared.values():
        assert route.dependant is not None  # any part builds the whole route
        assert route.built
    route = declared["getGreeting"]
    path, endpoint = route.path, route.endpoint
    eager = APIRoute(
        path,
        endpoint,
        response_model=Greeting,
        operation_id="getGreeting",
        tags=["Probe"],
        methods=["GET"],
    )
    assert set(vars(eager)) <= set(vars(route))
    assert set(vars(eager)) - set(vars(_routes().routes[0])) <= EtikettRoute.BUILT_ATTRIBUTES
    assert route.unique_id == eager.unique_id and route.methods == eager.methods
    assert [p.name for p in route.dependant.query_params] == ["times"]
    assert route.response_field is not None
    assert route.access.describe() == {"authenticated": False, "roles": [], "human": False}
    assert route.openapi_extra == {
        "x-etikett-access": {"authenticated": False, "roles": [], "human": False},
        "x-etikett-mcp": True,
    }
    assert sorted(route.responses) == [400, 422, 503]


def test_threads_asking_at_once_share_one_build() -> None:
    routes = _routes()
    route = routes.routes[0]
    assert isinstance(route, EtikettRoute) and not route.built
    start = threading.Barrier(8)
    seen: list[Any] = []

    def read() -> None:
        start.wait()
        seen.append(route.app)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(seen) == 8 and all(app is seen[0] for app in seen)


class Order(Model):
    text: str


def test_a_body_of_a_model_built_on_first_use_is_answered_without_warnings() -> None:
    """FastAPI silences pydantic's warning about a body parameter's alias when it builds the
    body's validator; a model built on first use (etikett_engine.model.Model) must not bring it back
    on the route's first request."""
    routes = router()

    @routes.post("/orders", operation_id="postOrder", response_model=Order)
    def post_order(body: Order, invocation: Anyone) -> Order:
        return body

    client = TestClient(create_app(routes))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answer = client.post("/orders", json={"text": "hi"})
        refused = client.post("/orders", json={"text": 1})
    assert answer.status_code == 200 and answer.json() == {"text": "hi"}
    assert refused.status_code == 422
    assert [str(w.message) for w in caught] == []


class _ContendedLock:
    """The build lock, noting when a second thread has to wait for it."""

    def __init__(self, contended: threading.Event) -> None:
        self._lock = threading.RLock()
        self._owner: int | None = None
        self._contended = contended

    def __enter__(self) -> None:
        if self._owner not in (None, threading.get_ident()):
            self._contended.set()
        self._lock.acquire()
        self._owner = threading.get_ident()

    def __exit__(self, *exc: object) -> None:
        self._owner = None
        self._lock.release()


def test_a_route_read_while_another_thread_builds_it_is_never_half_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The OpenAPI build reading a route that a first request is building sees it whole: its
    problem responses and access rule, not FastAPI's parts without ours (the document is cached
    for the process, so a half-built route would stay in it)."""
    building = threading.Event()  # the builder is inside FastAPI's analysis of the endpoint
    reader_moved = threading.Event()  # the reader has read, or waits for the build
    monkeypatch.setattr("etikett.api.routing._BUILDING", _ContendedLock(reader_moved))

    class Slow(str):
        @classmethod
        def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
            building.set()
            assert reader_moved.wait(10), "the reader neither read nor waited"
            return core_schema.str_schema()

    routes = router()

    @routes.get("/slow", operation_id="getSlow", response_model=Slow)
    def get_slow(invocation: Anyone) -> str:
        return "slow"

    route = routes.routes[0]
    assert isinstance(route, EtikettRoute)
    builder = threading.Thread(target=route.build)
    builder.start()
    assert building.wait(10)
    seen: dict[str, Any] = {}

    def read() -> None:
        seen["responses"] = sorted(route.responses)
        seen["extra"] = route.openapi_extra
        reader_moved.set()

    reader = threading.Thread(target=read)
    reader.start()
    builder.join()
    reader.join()
    assert seen["responses"] == [400, 422, 503]
    assert seen["extra"] == {
        "x-etikett-access": {"authenticated": False, "roles": [], "human": False},
        "x-etikett-mcp": True,
    }


def test_a_declaration_without_operation_id_or_access_rule_is_refused() -> None:
    routes = router()
    with pytest.raises(TypeError, match="operation_id"):

        @routes.get("/anonymous")
        def anonymous(invocation: Anyone) -> None:
            return None

    @routes.get("/unguarded", operation_id="getUnguarded")
    def unguarded() -> None:
        return None

    @routes.get("/twice", operation_id="getTwice")
    def twice(first: Anyone, second: Annotated[Invocation, any_caller()]) -> None:
        return None

    for route in routes.routes:
        assert isinstance(route, EtikettRoute)
        with pytest.raises(TypeError, match="exactly one access rule"):
            route.build()
        assert not route.built  # the same error again next time, not a half-built route


def test_reading_what_a_route_does_not_have_builds_nothing() -> None:
    route = _routes().routes[0]
    assert getattr(route, "original_router", None) is None
    with pytest.raises(AttributeError):
        _ = route.no_such_part  # type: ignore[attr-defined]
    assert isinstance(route, EtikettRoute) and not route.built


@pytest.mark.parametrize("group", [group for group in GROUPS if group != "mcp"])
def test_every_operation_builds(group: str) -> None:
    """What the OpenAPI build does at `sam build` for every route, here per group."""
    for route in routes_of(group).routes:
        assert isinstance(route, EtikettRoute)
        route.build()
        assert route.built and route.access is not None
