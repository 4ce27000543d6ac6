"""The Runner's HTTP trigger port against what a web page, a DNS-rebinding page or a flood could
send: JSON only (415), no cross-site requests (403), only its own address or allowed names as
Host (421), a trigger's secret in constant time (401), bounded bodies (411/413), a request
budget per client (429 with Retry-After) and few requests at once (503). Nothing refused ever
starts a run."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from etikett_runner.http_triggers import MAX_HTTP_BODY, Budgets, HttpLimits, HttpTriggers

SECRET = "trg-Qm3v8YtB1x"


class FakeFlow:
    """What a route needs of a deployed flow: its spec (with the delivered secrets) and a way
    to start a run."""

    flow_id = "flw_1"

    def __init__(self, credentials: dict[str, str] | None = None) -> None:
        self.spec: dict[str, Any] = {"credentials": credentials or {}}
        self.events: list[list[dict[str, Any]]] = []
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def run_event(self, node_id: str, records: list[dict[str, Any]], source: str) -> str:
        self.entered.set()
        if self.gate is not None:
            self.gate.wait(10)
        self.events.append(records)
        return f"frn_{len(self.events)}"


class Port:
    def __init__(self, limits: HttpLimits | None = None, host_names: tuple[str, ...] = ()):
        self.triggers = HttpTriggers("127.0.0.1", 0, host_names=host_names, limits=limits)
        self.triggers.start()
        self.port = self.triggers.address[1]
        self.base = f"http://127.0.0.1:{self.port}"
        self.open = FakeFlow()
        self.guarded = FakeFlow({"erp-trigger": SECRET})
        self.triggers.add("orders", self.open, "web")  # type: ignore[arg-type]
        self.triggers.add("guarded", self.guarded, "web", "erp-trigger")  # type: ignore[arg-type]

    def post(self, path: str = "orders", **kwargs: Any) -> httpx.Response:
        kwargs.setdefault("json", {"n": 1})
        return httpx.post(f"{self.base}/flows/{path}", timeout=10, trust_env=False, **kwargs)

    def raw(self, request: bytes) -> bytes:
        with socket.create_connection(("127.0.0.1", self.port), timeout=10) as conn:
            conn.sendall(request)
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        return answer

    def close(self) -> None:
        self.triggers.close()


@pytest.fixture
def port() -> Iterator[Port]:
    made = Port(host_names=("labels-pc.site.example",))
    yield made
    made.close()


def code(response: httpx.Response) -> tuple[int, str]:
    assert response.headers["content-type"] == "application/problem+json"
    return response.status_code, str(response.json()["code"])


def test_only_json_starts_a_flow(port: Port) -> None:
    assert port.post().status_code == 202
    assert port.post(json=None, content=b'{"n": 1}').status_code == 415  # no type at all
    for kind in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data"):
        answer = port.post(json=None, content=b'{"n": 1}', headers={"content-type": kind})
        assert code(answer) == (415, "trigger.media_type")
    charset = {"content-type": "application/json; charset=utf-8"}
    assert port.post(json=None, content=b'{"n": 2}', headers=charset).status_code == 202
    assert port.open.events == [[{"n": 1}], [{"n": 2}]]


@pytest.mark.parametrize(
    "headers",
    [
        {"origin": "https://evil.example"},
        {"origin": "null"},  # a sandboxed frame, a file:// page
        {"origin": "http://127.0.0.1"},  # even a page on this very machine
        {"sec-fetch-site": "cross-site"},
        {"sec-fetch-site": "same-site"},
    ],
)
def test_a_request_from_a_web_page_is_refused(port: Port, headers: dict[str, str]) -> None:
    assert code(port.post(headers=headers)) == (403, "trigger.cross_site")
    assert port.open.events == []


@pytest.mark.parametrize(
    "host",
    [
        "evil.example",  # DNS rebinding: the page's own name now points here
        "evil.example:{port}",
        "127.0.0.2:{port}",  # not the address the request arrived at
        "127.0.0.1:1",  # another port
        "127.0.0.1",  # port 80, then
        "",
    ],
)
def test_a_host_that_is_not_this_port_is_misdirected(port: Port, host: str) -> None:
    answer = port.post(headers={"host": host.format(port=port.port)})
    assert code(answer) == (421, "trigger.host_refused")
    assert port.open.events == []


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "LABELS-PC.site.example.:{port}"]
)
def test_the_listening_address_and_allowed_names_are_fine(port: Port, host: str) -> None:
    assert port.post(headers={"host": host.format(port=port.port)}).status_code == 202


def test_two_host_headers_are_misdirected(port: Port) -> None:
    body = b'{"n": 1}'
    answer = port.raw(
        b"POST /flows/orders HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nHost: evil.example\r\n"
        b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
        % (port.port, len(body), body)
    )
    assert answer.startswith(b"HTTP/1.0 421 ")
    assert port.open.events == []


def test_a_trigger_with_a_secret_wants_it(port: Port) -> None:
    for headers in (
        {},
        {"authorization": "Bearer wrong"},
        {"authorization": f"Basic {SECRET}"},
        {"x-etikett-trigger-secret": SECRET[:-1]},
        {"authorization": f"Bearer {SECRET}x"},
    ):
        answer = port.post("guarded", headers=headers)
        assert code(answer) == (401, "trigger.secret_required")
        assert answer.headers["www-authenticate"].startswith("Bearer")
        assert SECRET not in answer.text
    assert port.guarded.events == []
    assert port.post("guarded", headers={"authorization": f"Bearer {SECRET}"}).status_code == 202
    assert port.post("guarded", headers={"x-etikett-trigger-secret": SECRET}).status_code == 202
    assert len(port.guarded.events) == 2
    # Replaced on the service: the next request wants the new one.
    port.guarded.spec = {"credentials": {"erp-trigger": "new-secret"}}
    assert port.post("guarded", headers={"authorization": f"Bearer {SECRET}"}).status_code == 401
    assert port.post("guarded", headers={"authorization": "Bearer new-secret"}).status_code == 202
    # Not delivered (the credential was deleted): closed, never open.
    port.guarded.spec = {"credentials": {}}
    answer = port.post("guarded", headers={"authorization": "Bearer new-secret"})
    assert code(answer) == (503, "trigger.secret_unavailable")
    assert len(port.guarded.events) == 3


def test_bodies_are_bounded_and_must_say_their_length(port: Port) -> None:
    head = (
        b"POST /flows/orders HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
    )
    chunked = port.raw(
        head % port.port + b'Transfer-Encoding: chunked\r\n\r\n8\r\n{"n": 1}\r\n0\r\n\r\n'
    )
    assert chunked.startswith(b"HTTP/1.0 411 ")
    unsaid = port.raw(head % port.port + b"\r\n")
    assert unsaid.startswith(b"HTTP/1.0 411 ")
    # Refused on what it says, before a byte of the body is read.
    huge = port.raw(head % port.port + b"Content-Length: %d\r\n\r\n{" % (MAX_HTTP_BODY + 1))
    assert huge.startswith(b"HTTP/1.0 413 ")
    assert b'"code": "trigger.too_large"' in huge
    nested = b"[" * 100_000 + b"]" * 100_000
    assert code(port.post(json=None, content=nested, headers={"content-type": "application/json"}))[
        1
    ] in ("trigger.not_json", "trigger.not_records")
    assert port.open.events == []


def test_other_methods_and_paths_start_nothing(port: Port) -> None:
    client = httpx.Client(base_url=port.base, trust_env=False)
    assert code(client.get("/flows/orders")) == (405, "trigger.method_not_allowed")
    assert code(client.options("/flows/orders")) == (405, "trigger.method_not_allowed")
    assert "access-control-allow-origin" not in client.options("/flows/orders").headers
    assert code(port.post("nowhere")) == (404, "trigger.not_found")
    assert code(port.post(json=[])) == (422, "trigger.not_records")
    assert (
        code(port.post(json=None, content=b"{", headers={"content-type": "application/json"}))[0]
        == 400
    )
    assert port.open.events == []


def test_each_client_has_a_request_budget() -> None:
    # One request back every 20 s: the four below come long before, however busy the machine.
    port = Port(limits=HttpLimits(rate=0.05, burst=3))
    try:
        # Guessing a secret spends the budget like any request that reached a route.
        guesses = [port.post("guarded", headers={"authorization": "Bearer guess"}) for _ in "ab"]
        assert [a.status_code for a in guesses] == [401, 401]
        assert port.post().status_code == 202
        answer = port.post("guarded", headers={"authorization": f"Bearer {SECRET}"})
        assert code(answer) == (429, "trigger.rate_limited")
        assert 1 <= int(answer.headers["retry-after"]) <= 20
        assert len(port.open.events) == 1 and port.guarded.events == []
    finally:
        port.close()


def test_budgets_refill_per_client() -> None:
    budgets = Budgets(rate=2.0, burst=2)
    assert [budgets.take("10.0.0.5", now=100.0) for _ in range(2)] == [0.0, 0.0]
    assert budgets.take("10.0.0.5", now=100.0) == pytest.approx(0.5)
    assert budgets.take("10.0.0.6", now=100.0) == 0.0  # another client has its own
    assert budgets.take("10.0.0.5", now=100.25) == pytest.approx(0.25)  # refused: not spent
    assert budgets.take("10.0.0.5", now=100.5) == 0.0


def test_few_requests_run_at_once() -> None:
    port = Port(limits=HttpLimits(concurrent=1))
    try:
        port.open.gate = threading.Event()
        first: list[httpx.Response] = []
        worker = threading.Thread(target=lambda: first.append(port.post()))
        worker.start()
        assert port.open.entered.wait(10)
        busy = port.post()
        assert code(busy) == (503, "trigger.busy") and busy.headers["retry-after"] == "1"
        port.open.gate.set()
        worker.join(10)
        assert first[0].status_code == 202
        assert port.post().status_code == 202
    finally:
        port.close()
