"""Discovery targets → addresses to probe: `host`, `host:port`, `[v6]:port` or an IPv4 CIDR of at
most /24 (`10.0.0.0/24`, `10.0.0.0/24:6101`); port 9100 unless given. Only private and link-local
addresses on printer ports (loopback only with `--loopback-printers`; see `reach`): a Runner never
scans the internet, nor its own network's other services, whatever the service asked. A name is
resolved and checked when it is probed."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

from etikett_runner import reach

DEFAULT_PORT = 9100
MAX_ADDRESSES = 256
_HOSTNAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.\-]{0,251}[A-Za-z0-9])?")


class TargetError(ValueError):
    """A target that is malformed, public or too large."""


@dataclass(frozen=True, order=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def _split(target: str) -> tuple[str, int]:
    text = target.strip()
    if text.startswith("["):  # [v6] or [v6]:port
        host, _, rest = text[1:].partition("]")
        port_text = rest[1:] if rest.startswith(":") else rest
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:
        host, port_text = text, ""
    if not port_text:
        return host, DEFAULT_PORT
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise TargetError(f"{target!r}: bad port")
    return host, int(port_text)


def _refusal(address: ipaddress.IPv4Address | ipaddress.IPv6Address, port: int) -> str | None:
    why = reach.address_refusal(str(address))
    if why is None and not address.is_loopback:
        why = reach.port_refusal(port)
    return why


def expand(targets: list[str], limit: int = MAX_ADDRESSES) -> list[Address]:
    """Every address the targets name, in order, without duplicates."""
    found: dict[Address, None] = {}
    for target in targets:
        host, port = _split(target)
        if "/" in host:
            try:
                network = ipaddress.ip_network(host, strict=False)
            except ValueError:
                raise TargetError(f"{target!r}: not a CIDR") from None
            if network.version != 4 or network.prefixlen < 24:
                raise TargetError(f"{target!r}: a CIDR may span at most a /24")
            for edge in (network.network_address, network.broadcast_address):
                why = _refusal(edge, port)
                if why:
                    raise TargetError(f"{target!r}: {why}")
            hosts = list(network.hosts()) if network.prefixlen < 31 else list(network)
            for address in hosts:
                found[Address(str(address), port)] = None
        else:
            try:
                literal = ipaddress.ip_address(host)
            except ValueError:
                if not _HOSTNAME.fullmatch(host):
                    raise TargetError(f"{target!r}: not a host name or address") from None
                if reach.port_refusal(port) and not _loopback_name(host):
                    raise TargetError(f"{target!r}: {reach.port_refusal(port)}") from None
                found[Address(host.lower(), port)] = None
            else:
                why = _refusal(literal, port)
                if why:
                    raise TargetError(f"{target!r}: {why}")
                found[Address(str(literal), port)] = None
        if len(found) > limit:
            raise TargetError(f"the targets cover more than {limit} addresses")
    return list(found)


def _loopback_name(host: str) -> bool:
    # Checked again when it resolves; a loopback printer may listen on any port.
    return host.lower().rstrip(".") == "localhost"
