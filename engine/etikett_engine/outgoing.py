"""Where the service may send HTTP requests of its own (webhooks, language models) and a Runner
the requests of deployed flows' HTTP nodes, and the one client that sends them.

The rules:
- the URL is HTTPS, or plain HTTP to a loopback host (`localhost`, 127.0.0.0/8, `::1`) for
  development; never credentials in it, never a fragment;
- the host is resolved and **every** address it resolves to is checked before connecting:
  link-local (cloud metadata), multicast, unspecified and reserved addresses never; loopback and
  private addresses (10/8, 172.16/12, 192.168/16, fc00::/7, 100.64/10, …) only where they are
  allowed, which the caller always says (`private_allowed`; the engine reads no settings): the
  service passes `ETIKETT_OUTGOING_PRIVATE_NETWORKS` (the template parameter
  OutgoingPrivateNetworks, off on a deployed stack unless an admin turns it on; local mode turns
  it on; see `etikett.domain.outgoing`), a Runner its `--outgoing-private-networks`. A URL that
  names such an address (or `localhost`) is refused when it is stored already;
- the connection goes to an address that was checked (the client resolves once, checks, and
  connects to that address itself; TLS still verifies the certificate for the URL's name and sends
  it as SNI, and `Host` is the name), so a DNS answer that changes between check and connect
  cannot move a request into the private network;
- redirects are never followed; proxies from the environment are ignored.

`check_url` is the cheap syntactic check made when a URL is stored; `client()` enforces the rest
on every connection.
"""

from __future__ import annotations

import ipaddress
import socket
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

if TYPE_CHECKING:
    import httpx

MAX_URL_LENGTH = 2048
LOOPBACK_NAMES = frozenset({"localhost"})
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class UrlRefused(ValueError):
    """The URL is not one the service sends to; the message says why."""


class AddressRefused(ConnectionError):
    """The host resolved to an address the service does not connect to (raised on connect)."""

    def __init__(self, host: str, address: str, reason: str) -> None:
        super().__init__(f"{host} resolves to {address}, {reason}")
        self.host = host
        self.address = address
        self.reason = reason


def is_loopback(host: str) -> bool:
    """Whether `host` names loopback itself (a loopback name or literal address)."""
    name = host.lower().rstrip(".").strip("[]")
    if name in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def check_url(url: str, *, private_allowed: bool, max_length: int = MAX_URL_LENGTH) -> str:
    """`url` if the service may send to it, else `UrlRefused` saying why. `private_allowed`:
    whether loopback and private addresses may be reached (the caller's setting);
    `max_length`: longer for URLs that are made, not stored (presigned ones)."""
    if len(url) > max_length:
        raise UrlRefused(f"at most {max_length} characters")
    if any(ord(c) <= 32 or ord(c) == 127 for c in url):
        raise UrlRefused("must not contain spaces or control characters")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        parts.port  # noqa: B018 - raises ValueError for a port out of range
    except ValueError as error:
        raise UrlRefused(f"not a valid URL ({error})") from None
    if parts.scheme not in ("https", "http"):
        raise UrlRefused("must be an https:// URL (or http:// to loopback for development)")
    if not host:
        raise UrlRefused("must name a host")
    if parts.username is not None or parts.password is not None:
        raise UrlRefused("must not contain credentials")
    if parts.fragment:
        raise UrlRefused("must not contain a fragment")
    if parts.scheme == "http" and not is_loopback(host):
        raise UrlRefused(
            "plain http:// is allowed only to loopback (localhost, 127.0.0.0/8, ::1); use https://"
        )
    named = _named_address(host)
    if named is not None:
        reason = refusal(named, private_allowed=private_allowed)
        if reason is not None:
            raise UrlRefused(f"names {reason}")
    return url


def _named_address(host: str) -> IPAddress | None:
    """The address a URL's host names literally (`localhost` counts as 127.0.0.1)."""
    name = host.lower().rstrip(".").strip("[]")
    if name in LOOPBACK_NAMES:
        return ipaddress.ip_address("127.0.0.1")
    try:
        return ipaddress.ip_address(name.split("%", 1)[0])
    except ValueError:
        return None


ALLOWANCE = "allowed only in local mode or where an admin allows private networks"


def refusal(address: IPAddress, *, private_allowed: bool) -> str | None:
    """Why the service does not connect to `address`, or None if it may."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_link_local:
        return "a link-local address (never: cloud metadata lives there)"
    if address.is_loopback:
        if private_allowed:
            return None
        return f"a loopback address ({ALLOWANCE})"
    if address.is_multicast or address.is_unspecified or address.is_reserved:
        return "not a unicast address"
    if not address.is_global:
        if private_allowed:
            return None
        return f"a private address ({ALLOWANCE})"
    return None


def checked_addresses(
    host: str, port: int, *, private_allowed: bool, loopback_only: bool = False
) -> list[str]:
    """Every address `host` resolves to, each checked; `AddressRefused` if any is refused
    (a name with one bad address is refused whole: which one a connection gets is not ours)."""
    name = host.strip("[]")
    try:
        infos = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
    except socket.gaierror as error:
        raise AddressRefused(host, "nothing", f"it does not resolve ({error.strerror})") from None
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        text = str(sockaddr[0]).split("%", 1)[0]
        address = ipaddress.ip_address(text)
        if loopback_only and not address.is_loopback:
            raise AddressRefused(host, text, "not loopback (plain http:// is for loopback only)")
        reason = refusal(address, private_allowed=private_allowed)
        if reason is not None:
            raise AddressRefused(host, text, reason)
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise AddressRefused(host, "nothing", "it has no address")
    return addresses


def client(
    *,
    timeout: float,
    private_allowed: bool,
    verify: Any = None,
    headers: dict[str, str] | None = None,
    max_url_length: int = MAX_URL_LENGTH,
) -> httpx.Client:
    """An httpx client that connects only to checked addresses (see the module's rules), follows
    no redirect and ignores proxy settings. `verify`: an `ssl.SSLContext` (tests), else the
    default trust store."""
    # Loaded here, not at the mcp, webhook_sender and webhooks functions' cold start.
    import httpx

    return httpx.Client(
        transport=_transport(private_allowed, verify, max_url_length),
        timeout=timeout,
        follow_redirects=False,
        trust_env=False,
        headers=headers,
    )


_kept: dict[tuple[object, ...], httpx.Client] = {}
_kept_lock = threading.Lock()


def kept_client(
    *, timeout: float, private_allowed: bool, headers: dict[str, str] | None = None
) -> httpx.Client:
    """The process's `client` for these settings, made on first use and kept: making one loads
    the trust store (tens of ms), and a kept one keeps its connections for the next call."""
    key = (timeout, private_allowed, tuple(sorted((headers or {}).items())))
    with _kept_lock:
        found = _kept.get(key)
        if found is None:
            found = _kept[key] = client(
                timeout=timeout, private_allowed=private_allowed, headers=headers
            )
        return found


def _transport(private_allowed: bool, verify: Any, max_url_length: int) -> httpx.BaseTransport:
    # Loaded here, not at the mcp, webhook_sender and webhooks functions' cold start.
    import httpcore
    import httpx

    class PinnedBackend(httpcore.NetworkBackend):
        """Resolves, checks every address, connects to a checked one: what reaches the socket
        is never a name, so nothing can resolve differently after the check."""

        def __init__(self) -> None:
            self._plain = httpcore.SyncBackend()

        def connect_tcp(
            self,
            host: str,
            port: int,
            timeout: float | None = None,
            local_address: str | None = None,
            socket_options: Iterable[Any] | None = None,
        ) -> httpcore.NetworkStream:
            addresses = checked_addresses(host, port, private_allowed=private_allowed)
            last: Exception | None = None
            for address in addresses:
                try:
                    return self._plain.connect_tcp(
                        address, port, timeout, local_address, socket_options
                    )
                except (httpcore.ConnectError, httpcore.ConnectTimeout) as error:
                    last = error
            assert last is not None
            raise last

        def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore.NetworkStream:
            raise AddressRefused("unix socket", "a path", "not a network address")

        def sleep(self, seconds: float) -> None:
            self._plain.sleep(seconds)

    class PinnedTransport(httpx.HTTPTransport):
        def __init__(self) -> None:
            context = verify if verify is not None else httpx.create_ssl_context()
            super().__init__(verify=context, trust_env=False)
            # httpx builds its pool with the default network backend; ours checks addresses.
            self._pool = httpcore.ConnectionPool(
                ssl_context=context,
                max_connections=20,
                max_keepalive_connections=10,
                keepalive_expiry=30.0,
                network_backend=PinnedBackend(),
            )

        def handle_request(self, request: httpx.Request) -> httpx.Response:
            try:
                check_url(
                    str(request.url), private_allowed=private_allowed, max_length=max_url_length
                )
            except UrlRefused as refused:
                raise AddressRefused(
                    request.url.host, "-", f"the URL is refused: {refused}"
                ) from None
            if request.url.scheme == "http":
                # Plain HTTP: every address must be loopback (and loopback allowed at all).
                checked_addresses(
                    request.url.host,
                    request.url.port or 80,
                    private_allowed=private_allowed,
                    loopback_only=True,
                )
            return super().handle_request(request)

    return PinnedTransport()
