"""`etikett-runner`: enroll (first start) and run until SIGTERM/SIGINT.

    etikett-runner --server URL --enrollment-token TOKEN --state-dir DIR   # first start
    etikett-runner --state-dir DIR                                         # later starts
    etikett-runner --config config.json --state-dir DIR --enrollment-token-file FILE  # installer
    etikett-runner --state-dir DIR --listen 8080 --data-dir /srv/labels  # deployed flows
    etikett-runner --state-dir DIR --watch-root /srv/labels --watch-root /mnt/erp/out

Exit status: 0 stopped, 2 bad arguments, 75 another Runner uses DIR, 77 enrollment refused,
78 the service no longer accepts this Runner (removed).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from types import FrameType

from etikett_runner import __version__, reach, roots
from etikett_runner.agent import Agent
from etikett_runner.channel import AgentChannel
from etikett_runner.enrollment import EnrollmentFailed, ensure_enrolled
from etikett_runner.http_triggers import HttpLimits, HttpTriggers
from etikett_runner.settings import SettingsError, resolve, save
from etikett_runner.state import StateDir, StateLocked, StateRefused
from etikett_runner.tuning import Tuning

log = logging.getLogger("etikett_runner")

EXIT_USAGE, EXIT_LOCKED, EXIT_ENROLLMENT = 2, 75, 77
TOKEN_ENV = "ETIKETT_ENROLLMENT_TOKEN"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="etikett-runner",
        description="The Etikett Runner: takes print jobs from the Etikett service and sends "
        "them to the label printers on this network.",
    )
    parser.add_argument(
        "--state-dir",
        required=True,
        type=Path,
        metavar="DIR",
        help="identity, journal and outbox (created with mode 0700)",
    )
    parser.add_argument("--server", metavar="URL", help="the service, e.g. https://etikett.example")
    parser.add_argument(
        "--agent-url", metavar="URL", help="the mutual-TLS endpoint for Runners (default: --server)"
    )
    parser.add_argument(
        "--ca-file", metavar="FILE", help="also trust this CA bundle for the service's certificates"
    )
    parser.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="the installer's config.json {server_url, agent_url, ca_file, …}",
    )
    parser.add_argument(
        "--enrollment-token",
        metavar="TOKEN",
        help=f"one-time token for the first start (or ${TOKEN_ENV})",
    )
    parser.add_argument(
        "--enrollment-token-file",
        type=Path,
        metavar="FILE",
        help="read the enrollment token from FILE",
    )
    parser.add_argument("--name", help="the Runner's name in Etikett (default: the host name)")
    flows = parser.add_argument_group("deployed flows (remembered for later starts)")
    flows.add_argument(
        "--listen",
        metavar="[HOST:]PORT",
        help="accept HTTP triggers (POST /flows/<path>) here; HOST defaults to 127.0.0.1",
    )
    flows.add_argument(
        "--data-dir",
        metavar="DIR",
        help="relative watched folders and the files flows write (default: <state dir>/data)",
    )
    flows.add_argument(
        "--watch-root",
        action="append",
        metavar="DIR",
        default=roots.from_environment() or None,
        help="a folder (with everything below it) that deployed flows may watch besides the "
        "data folder; repeat for more; give the whole list again to change it; default from "
        f"${roots.WATCH_ROOTS_ENV} (separated by {os.pathsep!r})",
    )
    flows.add_argument(
        "--listen-host-name",
        action="append",
        metavar="NAME",
        help="a host name HTTP triggers answer to besides the address they listen on "
        "(requests naming any other Host are refused: DNS rebinding); repeat for more",
    )
    defaults = reach.from_environment()
    network = parser.add_argument_group(
        "what the Runner may reach besides the service (see docs/guides/security.md)"
    )
    network.add_argument(
        "--loopback-printers",
        action="store_true",
        default=defaults.loopback_printers,
        help="also printers on 127.0.0.1/::1, e.g. the printer simulator (tests, demonstrations); "
        f"default from ${reach.LOOPBACK_ENV}",
    )
    network.add_argument(
        "--outgoing-private-networks",
        action="store_true",
        default=defaults.outgoing_private_networks,
        help="let deployed flows' HTTP nodes call loopback and private addresses (the site's "
        f"own services); default from ${reach.PRIVATE_HTTP_ENV}",
    )
    parser.add_argument(
        "--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"]
    )
    parser.add_argument("--log-file", type=Path, metavar="FILE", help="log here, not to stderr")
    parser.add_argument("--version", action="version", version=f"etikett-runner {__version__}")
    tuning = parser.add_argument_group("tuning (defaults suit production)")
    timings = Tuning()
    tuning.add_argument("--heartbeat-seconds", type=float, default=timings.heartbeat_seconds)
    tuning.add_argument(
        "--unreachable-seconds",
        type=float,
        default=timings.unreachable_seconds,
        help="retry an unreachable printer this long before failing the job",
    )
    tuning.add_argument("--held-recheck-seconds", type=float, default=timings.held_recheck_seconds)
    tuning.add_argument(
        "--confirm-seconds",
        type=float,
        default=timings.confirm_seconds,
        help="the printer's counter must advance within this (+2 s per label)",
    )
    tuning.add_argument(
        "--workers", type=int, default=timings.workers, help="jobs in progress at once"
    )
    tuning.add_argument(
        "--flows-seconds",
        type=float,
        default=timings.flows_seconds,
        help="ask for deployed flows (and their changes) this often",
    )
    limits = HttpLimits()
    tuning.add_argument(
        "--http-rate",
        type=float,
        default=limits.rate,
        help="HTTP trigger requests a second per client address (more: 429)",
    )
    tuning.add_argument(
        "--http-burst",
        type=int,
        default=limits.burst,
        help="HTTP trigger requests a client address may send at once",
    )
    tuning.add_argument(
        "--flow-retry-seconds",
        type=float,
        default=timings.flow_retry_seconds,
        help="start a flow that could not start (e.g. a missing folder) again after this",
    )
    return parser


def _token(args: argparse.Namespace) -> str | None:
    if args.enrollment_token:
        return str(args.enrollment_token).strip()
    if args.enrollment_token_file:
        try:
            return args.enrollment_token_file.read_text("utf-8").strip() or None
        except OSError as exc:
            raise SettingsError(
                f"cannot read {args.enrollment_token_file}: {exc.strerror or exc}"
            ) from None
    return os.environ.get(TOKEN_ENV, "").strip() or None


def configure_logging(level: str, log_file: Path | None = None) -> None:
    handler: logging.Handler
    if log_file is not None:
        from logging.handlers import RotatingFileHandler

        handler = RotatingFileHandler(log_file, maxBytes=5_000_000, backupCount=3)
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        logging.Formatter("%(asctime)s etikett-runner %(levelname)s %(name)s: %(message)s")
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("httpcore").setLevel(logging.WARNING)


def run(args: argparse.Namespace, stop: threading.Event) -> int:
    """Enroll if needed, then run the agent until `stop`; answers the exit status."""
    reach.configure(
        reach.Reach(
            loopback_printers=args.loopback_printers,
            outgoing_private_networks=args.outgoing_private_networks,
        )
    )
    state = StateDir(args.state_dir.resolve())
    try:
        state.create()
        state.lock()
        settings = resolve(
            state,
            server=args.server,
            agent_url=args.agent_url,
            ca_file=args.ca_file,
            name=args.name,
            config_file=args.config,
            data_dir=args.data_dir,
            listen=args.listen,
            watch_roots=args.watch_root or None,
            listen_host_names=args.listen_host_name or None,
        )
        allowed = settings.allowed_roots(state)
        allowed.check_state_dir()
        save(state, settings)
        waiting = state.read_json(state.enrollment) is not None  # enrolled, or awaiting approval
        token = None if state.enrolled or waiting else _token(args)
    except StateLocked as exc:
        log.error("%s", exc)
        return EXIT_LOCKED
    except (SettingsError, StateRefused, roots.RootsOverlap, OSError) as exc:
        log.error("%s", exc)
        return EXIT_USAGE
    hostname = socket.gethostname()
    log.info(
        "etikett-runner %s: service %s, agent channel %s, state %s",
        __version__,
        settings.server_url,
        settings.agent_url,
        state.root,
    )
    for root in allowed.roots[1:]:
        if not root.is_dir():
            log.warning("the watch root %s does not exist (yet); flows in it wait for it", root)
    log.info("deployed flows may use %s", allowed.describe())
    try:
        if not ensure_enrolled(settings, state, token, stop, hostname):
            return 0  # stopped while waiting
    except EnrollmentFailed as exc:
        log.error("enrollment failed: %s", exc)
        return EXIT_ENROLLMENT
    if not settings.agent_url_given:
        # The enrollment answer names the agent channel (and its CA is now in the state).
        settings = resolve(state, name=args.name)
        log.info("agent channel %s (from the enrollment)", settings.agent_url)
    reach.set_service(settings.agent_url)
    tuning = Tuning(
        heartbeat_seconds=args.heartbeat_seconds,
        unreachable_seconds=args.unreachable_seconds,
        held_recheck_seconds=args.held_recheck_seconds,
        confirm_seconds=args.confirm_seconds,
        workers=max(1, args.workers),
        flows_seconds=max(0.2, args.flows_seconds),
        flow_retry_seconds=max(0.5, args.flow_retry_seconds),
    )
    http = None
    listen = settings.listen_address()
    if listen is not None:
        try:
            http = HttpTriggers(
                *listen,
                host_names=settings.listen_host_names or (),
                limits=HttpLimits(rate=max(0.01, args.http_rate), burst=max(1, args.http_burst)),
            )
        except OSError as exc:
            log.error("cannot listen on %s:%d for HTTP triggers: %s", *listen, exc.strerror or exc)
            return EXIT_USAGE
    channel = AgentChannel(
        settings.agent_url, state.certificate, state.key, settings.ca_files(state)
    )
    agent = Agent(
        state,
        channel,
        tuning,
        hostname,
        data_dir=settings.flow_folder(state),
        http=http,
        roots=allowed,
    )
    return agent.run(stop)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.log_level, args.log_file)
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        log.info("signal %s: stopping", signal.Signals(signum).name)
        stop.set()

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    return run(args, stop)


if __name__ == "__main__":
    sys.exit(main())
