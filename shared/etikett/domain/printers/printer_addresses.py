"""Where a Runner may send print data and what it may probe: printer URIs and discovery targets.

A Runner is never a general proxy into the customer's network: printer URIs and discovery targets
are private or link-local addresses (or host names, which the Runner resolves and checks again on
its side) on printer ports — 9100, 6101, 515 and those an admin allows the Runner's group;
loopback only where `LoopbackPrinters` allows it (local mode, for the printer simulator), on any
port. Pure rules: the callers pass the ports the Runner's group allows."""

from __future__ import annotations

import re
from typing import Any

from etikett.settings import get_settings
from etikett_engine import printer_reach
from etikett_engine.errors import InvalidRequest, ProblemCode

URI = re.compile(r"^tcp://(?P<host>[A-Za-z0-9.\-]{1,253}|\[[0-9A-Fa-f:]+\]):(?P<port>\d{1,5})$")
MAX_ADDRESSES = printer_reach.MAX_ADDRESSES
_ENABLE = "in local mode: LoopbackPrinters"


def expand_targets(targets: list[str], *, count_only: bool = False) -> list[str]:
    """Validate the targets' form: host, host:port, [v6]:port or an IPv4 CIDR of at most /24,
    at most 256 addresses in all. Whether the Runner may reach them is `check_targets`."""
    total = 0
    for target in targets:
        host, _ = printer_reach.split_target(target)
        network = printer_reach.target_network(host, target)
        if network is not None:
            total += network.num_addresses
        elif printer_reach.ip_address(host) is None and not printer_reach.HOSTNAME.fullmatch(host):
            raise ValueError(f"{target!r}: not a host name or address")
        else:
            total += 1
    if total > MAX_ADDRESSES:
        raise ValueError(f"the targets cover {total} addresses; at most {MAX_ADDRESSES}")
    return targets


def address_refusal(host: str, port: int, allowed_ports: frozenset[int]) -> str | None:
    """Why a Runner must not connect to host:port as a printer, or None. A host name passes
    here (on its port): the Runner resolves it and checks what it resolves to."""
    loopback = get_settings().loopback_printers
    address = printer_reach.ip_address(host)
    if address is not None:
        refused = printer_reach.address_refusal(address, loopback_printers=loopback, enable=_ENABLE)
        if refused is not None or address.is_loopback:
            return refused  # a loopback printer (the simulator) listens on whatever port
    elif printer_reach.is_loopback_name(host) and not loopback:
        return f"a loopback name (printers there only {_ENABLE})"
    return printer_reach.port_refusal(port, allowed_ports)


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
        host, named_port = printer_reach.split_target(target)
        port = named_port if named_port is not None else printer_reach.DEFAULT_PORT
        hosts = [host]
        network = printer_reach.target_network(host, target)
        if network is not None:
            hosts = [str(network.network_address), str(network.broadcast_address)]
        for each in hosts:
            reason = address_refusal(each, port, allowed_ports)
            if reason is not None:
                raise _refused(f"The discovery target {target}", reason, target=target)
