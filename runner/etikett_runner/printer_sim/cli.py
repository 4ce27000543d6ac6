"""`etikett-printer-sim`: run a simulated Zebra label printer until Ctrl-C.

etikett-printer-sim --port 9100 --out labels/ --control-port 9180
curl -H 'Content-Type: application/json' -d '{"paper_out": true}' localhost:9180/condition
"""

from __future__ import annotations

import argparse
import ipaddress
import logging
import signal
import sys
import threading
from types import FrameType

from etikett_runner.printer_sim.server import DEFAULT_FIRMWARE, PrinterSimulator

log = logging.getLogger("etikett_runner.printer_sim")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="etikett-printer-sim",
        description="A simulated Zebra label printer: raw ZPL on a TCP port, labels to PNGs.",
    )
    parser.add_argument("--port", type=int, default=9100, help="TCP port (default 9100, 0: any)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--dpi", type=int, default=203, help="resolution: 203, 300 or 600")
    parser.add_argument("--out", metavar="DIR", help="write label-<seq>.png/.json here")
    parser.add_argument("--model", help='what ~HI reports (default "ZT411-<dpi>dpi")')
    parser.add_argument("--firmware", default=DEFAULT_FIRMWARE, help="what ~HI reports")
    parser.add_argument(
        "--control-port", type=int, metavar="M", help="HTTP control on 127.0.0.1:M (0: any)"
    )
    parser.add_argument("--odometer", type=int, default=0, help="printed-label count to start at")
    start = parser.add_argument_group("conditions at start (change them over --control-port)")
    start.add_argument("--paper-out", action="store_true")
    start.add_argument("--paused", action="store_true")
    start.add_argument("--head-open", action="store_true")
    start.add_argument("--slow", type=float, default=0.0, metavar="SECONDS", help="per copy")
    parser.add_argument("-v", "--verbose", action="store_true", help="log every query too")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s printer-sim %(levelname)s %(message)s",
        stream=sys.stderr,
    )
    if not _is_loopback(args.host):
        log.warning("listening on %s: anyone on that network can print here", args.host)
    simulator = PrinterSimulator(
        args.host,
        args.port,
        args.dpi,
        args.out,
        args.model,
        firmware=args.firmware,
        odometer=args.odometer,
        keep=100,  # a long session must not keep every raster in memory; the PNGs are on disk
        control_port=args.control_port,
    )
    simulator.set_condition(
        paper_out=args.paper_out or None,
        paused=args.paused or None,
        head_open=args.head_open or None,
        slow_seconds=args.slow or None,
    )
    stopping = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, on_signal)
    try:
        simulator.start()
    except OSError as exc:  # the port (or the control port) is taken or not ours
        log.error("cannot start: %s", exc)
        return 1
    if simulator.out_dir is None:
        log.info("no --out: labels are decoded and counted, not written")
    else:
        log.info("labels → %s", simulator.out_dir.resolve())
    try:
        while not stopping.wait(0.5):  # a timed wait keeps Ctrl-C responsive
            pass
    except KeyboardInterrupt:
        pass
    finally:
        simulator.stop()
    return 0


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


if __name__ == "__main__":
    sys.exit(main())
