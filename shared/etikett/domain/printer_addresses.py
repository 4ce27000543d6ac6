"""Where a Runner may send print data and what it may probe: printer URIs and discovery targets.

A Runner is never a general proxy into the customer's network: printer URIs and discovery targets
are private or link-local addresses (or host names, which the Runner resolves and checks again on
its side) on printer ports — 9100, 6101, 515 and those an admin allows the Runner's group;
loopback only where `LoopbackPrinters` allows it (local mode, for the printer simulator), on any
port. Pure rules: the callers pass the ports the Runner's group allows."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from etikett.settings import get_settings
from etikett_engine.errors import InvalidRequest, ProblemCode

URI = re.compile(r"^tcp://(?P<host>[A-Za-z0-9.\-]{1,253}|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})$")
MAX_ADDRESSES = 256


def expand_targets(targets: list[str], *, count_only: bool = False) -> list[str]:
    """Validate the targets' form: host, host:port, [v6]:port or an IPv4 CIDR of at most /24,
    at most 256 addresses in all. Whether the Runner may reach them is `check_targets`."""
    total = 0
    for target in targets:
        host, port = split_target(target)
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


def split_target(target: str) -> tuple[str, int | None]:
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
        host, port = split_target(target)
        port = port if port is not None else 9100
        hosts = [host]
        if "/" in host:
            network = ipaddress.ip_network(host, strict=False)
            hosts = [str(network.network_address), str(network.broadcast_address)]
        for each in hosts:
            reason = address_refusal(each, port, allowed_ports)
            if reason is not None:
                raise _refused(f"The discovery target {target}", reason, target=target)
