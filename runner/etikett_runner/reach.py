"""What this Runner may connect to besides the service: its own rules, checked on its side after
every name is resolved, so that not even a compromised service can make it a proxy into the
site's network.

- Printers (jobs, status, discovery) only at private (10/8, 172.16/12, 192.168/16, fc00::/7) or
  link-local addresses, on printer ports: 9100 (raw), 6101 (Zebra's second raw port), 515 (LPD)
  and those the Runner's group allows (an admin's setting, delivered with the configuration).
  Loopback only with `--loopback-printers` (the printer simulator: tests and demonstrations).
- Deployed flows' HTTP nodes only to public HTTPS addresses; loopback and private addresses only
  with `--outgoing-private-networks` (the site's own ERP, say), through the pinned client of
  `etikett_engine.outgoing`.
- A job's bytes (`data_url`) only from the service's own storage (the origin its configuration
  names), over HTTPS through the same pinned client; plain HTTP to loopback only when the
  service itself is on loopback (local mode). See `download`.

The policy is the process's, set once at start (`configure`) from the command line, whose
defaults come from `ETIKETT_RUNNER_LOOPBACK_PRINTERS` and `ETIKETT_RUNNER_OUTGOING_PRIVATE_NETWORKS`
(1/true/yes); the group's extra ports change with the configuration (`allow_group_ports`).
"""

from __future__ import annotations

import os
import socket
import threading
from dataclasses import dataclass, field, replace

from etikett_engine import printer_reach
from etikett_engine.printer_reach import PRINTER_PORTS

LOOPBACK_ENV = "ETIKETT_RUNNER_LOOPBACK_PRINTERS"
PRIVATE_HTTP_ENV = "ETIKETT_RUNNER_OUTGOING_PRIVATE_NETWORKS"


class NotAPrinter(ConnectionError):
    """An address or port a Runner does not connect to as a printer; the message says why."""


@dataclass(frozen=True)
class Reach:
    loopback_printers: bool = False
    outgoing_private_networks: bool = False
    group_ports: frozenset[int] = field(default_factory=frozenset)
    storage_origin: str | None = None  # scheme://host[:port] of the service's job data URLs
    service_on_loopback: bool = False  # the agent channel is on this machine (local mode)

    @property
    def printer_ports(self) -> frozenset[int]:
        return PRINTER_PORTS | self.group_ports


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def from_environment() -> Reach:
    return Reach(
        loopback_printers=_flag(LOOPBACK_ENV), outgoing_private_networks=_flag(PRIVATE_HTTP_ENV)
    )


_policy: Reach | None = None
_lock = threading.Lock()


def policy() -> Reach:
    global _policy
    with _lock:
        if _policy is None:
            _policy = from_environment()
        return _policy


def configure(reach: Reach | None) -> None:
    """Set the process's policy (None: read the environment again on next use)."""
    global _policy
    with _lock:
        _policy = reach


def allow_group_ports(ports: list[int] | frozenset[int]) -> None:
    """The ports the Runner's group allows besides the printer ports (from the configuration)."""
    global _policy
    clean = frozenset(p for p in ports if isinstance(p, int) and 0 < p < 65536)
    current = policy()
    with _lock:
        _policy = replace(current, group_ports=clean)


def allow_storage(origin: object) -> None:
    """The origin the service's job data URLs come from (from the configuration)."""
    global _policy
    current = policy()
    clean = origin.strip().rstrip("/").lower() if isinstance(origin, str) and origin else None
    with _lock:
        _policy = replace(current, storage_origin=clean)


def set_service(agent_url: str) -> None:
    """Where the agent channel is: on loopback, the service runs on this machine."""
    global _policy
    from urllib.parse import urlsplit

    host = (urlsplit(agent_url).hostname or "").strip("[]")
    on_loopback = host.lower() == "localhost" or _literal_loopback(host)
    current = policy()
    with _lock:
        _policy = replace(current, service_on_loopback=on_loopback)


def _literal_loopback(host: str) -> bool:
    try:
        return _is_loopback(host)
    except ValueError:
        return False


def address_refusal(address: str, reach: Reach | None = None) -> str | None:
    """Why a printer at this IP address is refused, or None."""
    reach = reach or policy()
    parsed = printer_reach.ip_address(address)
    if parsed is None:
        return "not an IP address"
    return printer_reach.address_refusal(
        parsed, loopback_printers=reach.loopback_printers, enable="with --loopback-printers"
    )


def port_refusal(port: int, reach: Reach | None = None) -> str | None:
    return printer_reach.port_refusal(port, (reach or policy()).printer_ports)


def printer_addresses(host: str, port: int, reach: Reach | None = None) -> list[str]:
    """The addresses to connect to for a printer at host:port: the name resolved here and every
    address checked (a name with one refused address is refused whole); on a printer port,
    unless every address is loopback and loopback printers are allowed (the simulator listens
    wherever it was started)."""
    reach = reach or policy()
    try:
        infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise NotAPrinter(f"{host}: does not resolve ({error})") from None
    addresses: list[str] = []
    for info in infos:
        text = str(info[4][0])
        why = address_refusal(text, reach)
        if why:
            raise NotAPrinter(f"{host} is {text}, {why}")
        if text not in addresses:
            addresses.append(text)
    if not addresses:
        raise NotAPrinter(f"{host}: has no address")
    if not all(_is_loopback(a) for a in addresses):
        refused = port_refusal(port, reach)
        if refused:
            raise NotAPrinter(f"{host}:{port}: {refused}")
    return addresses


def _is_loopback(address: str) -> bool:
    parsed = printer_reach.ip_address(address)
    if parsed is None:
        raise ValueError(f"{address!r} is not an IP address")
    return parsed.is_loopback
