"""Discovery targets → addresses to probe: `host`, `host:port`, `[v6]:port` or an IPv4 CIDR of at
most /24 (`10.0.0.0/24`, `10.0.0.0/24:6101`); port 9100 unless given. Only private and link-local
addresses on printer ports (loopback only with `--loopback-printers`; see `reach`): a Runner never
scans the internet, nor its own network's other services, whatever the service asked. A name is
resolved and checked when it is probed."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

from etikett_engine import printer_reach
from etikett_runner import reach

MAX_ADDRESSES = printer_reach.MAX_ADDRESSES


class TargetError(ValueError):
    """A target that is malformed, public or too large."""


@dataclass(frozen=True, order=True)
class Address:
    host: str
    port: int

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def _split(target: str) -> tuple[str, int]:
    try:
        host, port = printer_reach.split_target(target)
    except ValueError as error:
        raise TargetError(str(error)) from None
    return host, port if port is not None else printer_reach.DEFAULT_PORT


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
        try:
            network = printer_reach.target_network(host, target)
        except ValueError as error:
            raise TargetError(str(error)) from None
        if network is not None:
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
                if not printer_reach.HOSTNAME.fullmatch(host):
                    raise TargetError(f"{target!r}: not a host name or address") from None
                if reach.port_refusal(port) and not printer_reach.is_loopback_name(host):
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
