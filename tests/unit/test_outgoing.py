"""The service's own HTTP client: every resolved address is checked, the connection goes to a
checked address with the URL's name as SNI and Host, and nothing is followed elsewhere."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from etikett import settings
from etikett.domain import outgoing as service_outgoing
from etikett_engine import outgoing
from etikett_engine.outgoing import AddressRefused, refusal
from support import self_signed


@pytest.mark.parametrize(
    ("address", "private", "refused"),
    [
        ("93.184.216.34", False, None),
        ("2606:4700::1111", False, None),
        ("10.1.2.3", False, "private"),
        ("10.1.2.3", True, None),
        ("192.168.0.10", True, None),
        ("100.64.0.1", False, "private"),
        ("fd00::1", False, "private"),
        # Loopback is the private network of the machine itself: allowed only with them.
        ("127.0.0.1", False, "loopback"),
        ("::1", False, "loopback"),
        ("127.0.0.1", True, None),
        ("::1", True, None),
        ("::ffff:10.0.0.1", False, "private"),
        ("::ffff:169.254.169.254", True, "link-local"),
        ("169.254.169.254", True, "link-local"),
        ("fe80::1", True, "link-local"),
        ("0.0.0.0", True, "unicast"),
        ("224.0.0.1", True, "unicast"),
        ("240.0.0.1", True, "unicast"),
    ],
)
def test_which_addresses_are_refused(address: str, private: bool, refused: str | None) -> None:
    reason = refusal(ipaddress.ip_address(address), private_allowed=private)
    assert (reason is None) == (refused is None), reason
    if refused:
        assert refused in reason


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:11434/v1",
        "http://localhost:8080/hooks",
        "https://localhost/hooks",
        "https://[::1]:8443/",
        "https://10.0.0.5/model",
        "https://192.168.1.20/",
    ],
)
def test_loopback_and_private_urls_only_where_allowed(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A deployed stack (OutgoingPrivateNetworks off, the default) refuses them when they are
    stored; local mode (on) and an admin who turned it on take them. The engine reads no
    setting: the service's check passes its own."""
    with pytest.raises(outgoing.UrlRefused, match="allowed only in local mode"):
        outgoing.check_url(url, private_allowed=False)
    assert outgoing.check_url(url, private_allowed=True) == url
    monkeypatch.delenv("ETIKETT_OUTGOING_PRIVATE_NETWORKS", raising=False)
    settings.reload()
    with pytest.raises(outgoing.UrlRefused):
        service_outgoing.check_url(url)  # the setting's default: off
    monkeypatch.setenv("ETIKETT_OUTGOING_PRIVATE_NETWORKS", "true")
    settings.reload()
    assert service_outgoing.check_url(url) == url
    with pytest.raises(TypeError):
        outgoing.check_url(url)  # type: ignore[call-arg]  # the engine wants it said


def test_link_local_is_refused_even_where_private_networks_are_allowed() -> None:
    for url in ("https://169.254.169.254/latest/meta-data/", "https://[fe80::1]/"):
        with pytest.raises(outgoing.UrlRefused, match="link-local"):
            outgoing.check_url(url, private_allowed=True)


def test_the_client_refuses_loopback_on_a_deployed_stack() -> None:
    with outgoing.client(timeout=2, private_allowed=False) as http:
        for url in ("http://127.0.0.1:9/", "https://localhost:9/"):
            with pytest.raises(AddressRefused, match="loopback"):
                http.get(url)


def _resolving(monkeypatch: pytest.MonkeyPatch, table: dict[str, list[str]]) -> list[str]:
    """getaddrinfo answers from `table` for its names (as a DNS server would); the calls made."""
    real = socket.getaddrinfo
    asked: list[str] = []

    def fake(host, port, *args, **kwargs):
        if host in table:
            asked.append(host)
            return [
                (
                    socket.AF_INET6 if ":" in a else socket.AF_INET,
                    socket.SOCK_STREAM,
                    6,
                    "",
                    (a, port),
                )
                for a in table[host]
            ]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake)
    return asked


def test_one_bad_address_refuses_the_name(monkeypatch: pytest.MonkeyPatch) -> None:
    _resolving(monkeypatch, {"mixed.test": ["93.184.216.34", "10.0.0.7"]})
    with pytest.raises(AddressRefused, match=r"10\.0\.0\.7"):
        outgoing.checked_addresses("mixed.test", 443, private_allowed=False)
    assert outgoing.checked_addresses("mixed.test", 443, private_allowed=True) == [
        "93.184.216.34",
        "10.0.0.7",
    ]


def test_a_public_name_resolving_to_metadata_is_refused_by_the_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = _resolving(monkeypatch, {"metadata.test": ["169.254.169.254"]})
    with outgoing.client(timeout=2, private_allowed=True) as http, pytest.raises(AddressRefused):
        http.get("https://metadata.test/latest/meta-data/")
    assert asked == ["metadata.test"]


def test_plain_http_only_to_loopback(monkeypatch: pytest.MonkeyPatch) -> None:
    _resolving(monkeypatch, {"localhost": ["10.0.0.9"]})  # a hosts file gone wrong
    with outgoing.client(timeout=2, private_allowed=True) as http:
        with pytest.raises(AddressRefused, match="loopback"):
            http.get("http://localhost:9/")
        with pytest.raises(AddressRefused, match="URL is refused"):
            http.get("http://example.com/")


def test_the_connection_is_pinned_with_the_names_sni_and_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`model.test` resolves (in this test's DNS) to loopback: the client connects to that
    address, sends `model.test` as SNI and Host, and verifies the certificate for that name."""
    cert_file, key_file = self_signed.certificate(tmp_path, "model.test")
    seen: dict[str, list[str]] = {"host": [], "sni": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen["host"].append(self.headers["host"])
            self.send_response(200)
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert_file, key_file)

    def remember_sni(sock: ssl.SSLSocket, name: str | None, _: ssl.SSLContext) -> None:
        seen["sni"].append(str(name))

    context.sni_callback = remember_sni
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = server.server_port
    trust = ssl.create_default_context(cafile=str(cert_file))
    asked = _resolving(monkeypatch, {"model.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    try:
        # A public name that resolves to loopback is refused unless private networks are allowed.
        refusing = outgoing.client(timeout=5, private_allowed=False, verify=trust)
        with refusing as http, pytest.raises(AddressRefused, match="loopback"):
            http.get(f"https://model.test:{port}/")
        with outgoing.client(timeout=5, private_allowed=True, verify=trust) as http:
            answer = http.get(f"https://model.test:{port}/")
            assert answer.status_code == 200 and answer.text == "ok"
            # The certificate names model.test only: another name on the same address fails.
            with pytest.raises(httpx.ConnectError):
                http.get(f"https://other.test:{port}/")
        assert seen == {"host": [f"model.test:{port}"], "sni": ["model.test", "other.test"]}
        assert asked == ["model.test", "model.test", "other.test"]
    finally:
        server.shutdown()
        server.server_close()


def test_proxies_from_the_environment_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HTTPS_PROXY", "http://10.0.0.1:3128")
    monkeypatch.setenv("HTTP_PROXY", "http://10.0.0.1:3128")
    with outgoing.client(timeout=2, private_allowed=False) as http:
        assert not http._mounts  # no proxy transport mounted
