"""Where a Runner may connect as to a printer: private or link-local addresses on printer ports,
loopback only where it is allowed (the printer simulator). One copy of the rules: the service
checks printer URIs and discovery targets with them when they are saved, and the Runner checks
every address again after it resolved the name, so not even a compromised service can make it a
proxy into the site's network. Pure: the caller says whether loopback is allowed, which ports
its group allows and how an operator turns loopback printers on (for the message)."""

from __future__ import annotations

import ipaddress
import re

PRINTER_PORTS = frozenset({9100, 6101, 515})  # raw, Zebra's second raw port, LPD
DEFAULT_PORT = 9100
MAX_ADDRESSES = 256  # one discovery's addresses; a CIDR spans at most a /24
HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.\-]{0,251}[A-Za-z0-9])?")

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


def ip_address(text: str) -> IPAddress | None:
    """The address `text` names (brackets and an IPv6 zone dropped, an IPv4-mapped IPv6 address
    as its IPv4 address), or None for a host name."""
    try:
        parsed = ipaddress.ip_address(text.strip("[]").split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped
    return parsed


def address_refusal(address: IPAddress, *, loopback_printers: bool, enable: str) -> str | None:
    """Why no printer may be at `address`, or None. `enable` says how loopback printers are
    allowed where the check runs (a setting or a command-line flag)."""
    if address.is_loopback:
        return None if loopback_printers else f"a loopback address (printers there only {enable})"
    if address.is_multicast or address.is_unspecified or address.is_reserved:
        return "not a unicast address"
    if address.is_private or address.is_link_local:
        return None
    return "not a private or link-local address: a Runner reaches printers on its own network only"


def port_refusal(port: int, allowed_ports: frozenset[int]) -> str | None:
    """Why `port` is no printer port, or None; `allowed_ports` are the printer ports and those
    the Runner's group allows."""
    if port in allowed_ports:
        return None
    allowed = ", ".join(str(each) for each in sorted(allowed_ports))
    return f"port {port} is not a printer port ({allowed}; an admin may allow more for the group)"


def split_target(target: str) -> tuple[str, int | None]:
    """A discovery target's host (a name, an address or an IPv4 CIDR) and port, if it names one:
    `host`, `host:port`, `[v6]`, `[v6]:port`, `10.0.0.0/24:6101`. ValueError for a bad port."""
    text = target.strip()
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else rest
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    if not port:
        return host, None
    if not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"{target!r}: bad port")
    return host, int(port)


def target_network(host: str, target: str) -> ipaddress.IPv4Network | None:
    """The IPv4 network a CIDR target spans (None for a single host). ValueError when it is no
    CIDR or spans more than a /24."""
    if "/" not in host:
        return None
    try:
        network = ipaddress.ip_network(host, strict=False)
    except ValueError:
        raise ValueError(f"{target!r}: not a CIDR") from None
    if not isinstance(network, ipaddress.IPv4Network) or network.prefixlen < 24:
        raise ValueError(f"{target!r}: a CIDR may span at most a /24")
    return network


def is_loopback_name(host: str) -> bool:
    """`localhost`: a loopback printer by name (checked again where it resolves)."""
    return host.lower().rstrip(".") == "localhost"
