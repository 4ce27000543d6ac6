"""`discovery` jobs: probe each target address concurrently with short timeouts (connect, `~HI`
for model, firmware and resolution, `~HS`/`~HQES` for status) and report what answered."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from etikett_runner.context import JobContext, message
from etikett_runner.targets import Address, TargetError, expand
from etikett_runner.zebra import NoAnswer, PrinterConnection, PrinterUnreachable

log = logging.getLogger(__name__)

CONNECT_TIMEOUT = 1.0
ANSWER_TIMEOUT = 1.5
WORKERS = 64


def probe(
    address: Address,
    connect_timeout: float = CONNECT_TIMEOUT,
    answer_timeout: float = ANSWER_TIMEOUT,
) -> dict[str, Any] | None:
    """A finding for an address whose port accepts connections, else None."""
    conn = PrinterConnection(address, connect_timeout, answer_timeout)
    try:
        conn.open()
    except PrinterUnreachable:
        return None
    finding: dict[str, Any] = {
        "address": str(address),
        "model": None,
        "firmware": None,
        "dpi": None,
        "status": "unknown",
    }
    with conn:
        try:
            identity = conn.identify()
            finding.update(model=identity.model, firmware=identity.firmware, dpi=identity.dpi)
        except (NoAnswer, PrinterUnreachable) as exc:
            log.debug("%s: no ~HI answer: %s", address, exc)
        try:
            finding["status"] = conn.state().status
        except (NoAnswer, PrinterUnreachable) as exc:
            log.debug("%s: no status answer: %s", address, exc)
    return finding


def discover(
    addresses: list[Address], stop: threading.Event | None = None, workers: int = WORKERS
) -> list[dict[str, Any]]:
    findings: list[dict[str, Any]] = []
    if not addresses:
        return findings
    with ThreadPoolExecutor(max_workers=min(workers, len(addresses))) as pool:
        for finding in pool.map(probe, addresses):
            if finding is not None:
                findings.append(finding)
            if stop is not None and stop.is_set():
                pool.shutdown(wait=False, cancel_futures=True)
                break
    return findings


def execute(ctx: JobContext) -> None:
    raw = ctx.payload.get("targets")
    targets = [str(t) for t in raw] if isinstance(raw, list) else []
    try:
        addresses = expand(targets)
    except TargetError as exc:
        ctx.finish("failed", reason="bad_targets", messages=[message("error", str(exc))])
        return
    if not addresses:
        ctx.finish("failed", reason="bad_targets", messages=[message("error", "No targets.")])
        return
    findings = discover(addresses, ctx.stop)
    ctx.check_stop()
    ctx.finish(
        "succeeded",
        result={"findings": findings},
        messages=[
            message(
                "info",
                f"Probed {len(addresses)} address(es); {len(findings)} answered on their port.",
            )
        ],
    )
