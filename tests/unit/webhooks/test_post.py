"""One delivery attempt over real HTTP to a loopback server (as in local mode, which allows
loopback and private networks): the answer, and what is refused; and on a deployed stack
(private networks not allowed), what never leaves."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import pytest

from etikett import settings
from etikett.domain.webhooks.webhook_delivery import post

HEADERS = {"content-type": "application/json", "webhook-id": "evt_1"}


class _Handler(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []
    # /slow answers once the test lets it (or after a minute), never within the client's timeout.
    release_slow: ClassVar[threading.Event] = threading.Event()

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        _Handler.seen.append(self.path)
        if self.path == "/slow":
            _Handler.release_slow.wait(60)
        status = {"/gone": 410, "/moved": 302, "/broken": 500}.get(self.path, 204)
        self.send_response(status)
        if status == 302:
            self.send_header("location", "https://elsewhere.example/")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETIKETT_OUTGOING_PRIVATE_NETWORKS", "true")
    settings.reload()


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ETIKETT_OUTGOING_PRIVATE_NETWORKS", "false")
    settings.reload()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()
    httpd.server_close()


def test_2xx_is_delivered(server: str, local_mode: None) -> None:
    response = post(f"{server}/ok", b"{}", HEADERS)
    assert response.delivered and response.status_code == 204 and response.error is None
    assert response.duration_ms >= 0


def test_410_and_500_are_answers_not_deliveries(server: str, local_mode: None) -> None:
    gone = post(f"{server}/gone", b"{}", HEADERS)
    assert (gone.delivered, gone.status_code, gone.error) == (False, 410, None)
    broken = post(f"{server}/broken", b"{}", HEADERS)
    assert (broken.delivered, broken.status_code, broken.error) == (False, 500, "HTTP 500")


def test_redirects_are_not_followed(server: str, local_mode: None) -> None:
    _Handler.seen.clear()
    response = post(f"{server}/moved", b"{}", HEADERS)
    assert not response.delivered and response.status_code == 302
    assert "not followed" in (response.error or "")
    assert _Handler.seen == ["/moved"]


def test_a_slow_receiver_times_out(server: str, local_mode: None) -> None:
    _Handler.release_slow.clear()
    try:
        started = time.monotonic()
        response = post(f"{server}/slow", b"{}", HEADERS, timeout=0.5)
        # Far below the minute the receiver would take, with room for a loaded machine.
        assert time.monotonic() - started < 30
    finally:
        _Handler.release_slow.set()
    assert response.status_code is None and "no answer within 0.5 s" in (response.error or "")


def test_nobody_listening(local_mode: None) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    response = post(f"http://127.0.0.1:{port}/", b"{}", HEADERS)
    assert response.status_code is None and "cannot connect" in (response.error or "")


def test_plain_http_elsewhere_is_never_sent() -> None:
    response = post("http://192.0.2.1/hooks", b"{}", HEADERS)
    assert response.status_code is None and "URL refused" in (response.error or "")
    assert response.duration_ms < 100


def test_a_deployed_stack_never_posts_to_loopback(server: str, deployed: None) -> None:
    _Handler.seen.clear()
    response = post(f"{server}/ok", b"{}", HEADERS)
    assert response.status_code is None and "loopback" in (response.error or "")
    assert _Handler.seen == []


def test_a_name_resolving_into_the_private_network_is_refused_on_connect(
    monkeypatch: pytest.MonkeyPatch, deployed: None
) -> None:
    """The name passes when stored; what it resolves to when sending decides, and the socket
    connects only to an address that was checked (a DNS answer that changes cannot move it)."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def resolving(host: str, port: object, *args: object, **kwargs: object) -> object:
        if host == "hooks.example.com":
            asked.append(host)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.20.30.40", 443))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolving)
    response = post("https://hooks.example.com/etikett", b"{}", HEADERS)
    assert response.status_code is None
    assert "10.20.30.40" in (response.error or "") and "private" in (response.error or "")
    assert asked == ["hooks.example.com"]
