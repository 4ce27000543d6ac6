"""`etikett dev`: serve the whole service locally (what `make dev` runs)."""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from etikett.local import template as templates
from etikett.local.settings import LocalSettings

DEMO_HOME = Path(".etikett-demo")  # the demo's state, apart from what `make dev` keeps


def _setup_required() -> bool:
    # The domain loads for `etikett dev`, not for the CLI's other commands.
    from etikett.domain.users.users import any_user_exists

    return not any_user_exists()


def dev(arguments: argparse.Namespace) -> int:
    # The local service (uvicorn, the gateway, the template) loads for `etikett dev` only.
    from etikett.local import logs
    from etikett.local.service import LocalService

    logs.configure(arguments.log_format)
    home = Path(arguments.home).resolve()
    service = LocalService(
        Path(arguments.template).resolve(),
        home,
        arguments.host,
        arguments.port,
        arguments.agent_port,
        arguments.broker_port,
    )
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    service.start()
    print(f"Etikett is serving at {service.url}  (state in {home})", flush=True)
    print(
        f"Runner agent channel (mutual TLS): {service.agent_url}  CA: {service.ca_file}", flush=True
    )
    print(f"Local AWS endpoint (moto): {service.aws.endpoint_url}", flush=True)
    if service.broker is not None:
        wakes = f"{service.host}:{service.broker_port}"
        print(f"MQTT broker (idle Runners' wakes, mutual TLS): {wakes}", flush=True)
    print(f"Browser console: {service.url}/console", flush=True)
    if arguments.demo:
        pass  # the demo site signs in itself and says how a person does
    elif _setup_required():
        print(
            f"First-time setup needed: open the console, or POST {service.url}/api/v1/auth/setup "
            '{"username": "...", "password": "..."}',
            flush=True,
        )
    else:
        print("Setup done: sign in with POST /api/v1/auth/login.", flush=True)
    demo = None
    if arguments.demo:
        # The demo site (a Runner and printers) loads only with --demo.
        from etikett.local.demo import DemoFailed, DemoSite

        assert service.ca_file is not None
        folder = Path(arguments.demo_dir).resolve()
        demo = DemoSite(service.url, service.agent_url, service.ca_file, home, folder)
        print("Setting up the demo site …", flush=True)
        try:
            demo.start()
        except DemoFailed as failure:
            print(f"The demo could not be set up: {failure}", file=sys.stderr, flush=True)
            demo.stop()
            service.stop()
            return 1
        else:
            for line in demo.banner():
                print(line, flush=True)
    print("Press Ctrl-C to stop.", flush=True)
    while not stopping.wait(0.5):  # wake regularly: a signal must never wait on a lock
        pass
    print("Stopping; saving local state …", flush=True)
    if demo is not None:
        demo.stop()  # the Runner first: it must not see the service go away mid-job
    service.stop()
    print("Stopped.", flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="etikett")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("dev", help="serve the whole service locally")
    local = LocalSettings()
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=local.port)
    serve.add_argument(
        "--home", default=None, help="local state (default: $ETIKETT_HOME, .etikett, .etikett-demo)"
    )
    serve.add_argument(
        "--agent-port",
        type=int,
        default=local.agent_port,
        help="the Runners' mutual-TLS port (default: --port + 443)",
    )
    serve.add_argument(
        "--broker-port",
        type=int,
        default=local.broker_port,
        help="the MQTT broker where idle Runners wait for wakes (default: --port + 883)",
    )
    serve.add_argument("--template", default=None)
    serve.add_argument(
        "--demo",
        action="store_true",
        help="also a printer simulator and a Runner with a flow that prints what lands in "
        "DEMO_DIR/inbox (state apart from make dev's, in .etikett-demo, unless --home)",
    )
    serve.add_argument("--demo-dir", default="demo", help="the demo's inbox and labels")
    serve.add_argument(
        "--log-format",
        choices=("text", "json"),
        default=local.log_format,
        help="one readable line per request and event (text), or JSON lines "
        "(default: $ETIKETT_LOG_FORMAT or text)",
    )
    restore = commands.add_parser(
        "restore-credentials",
        help="re-create backed-up credentials in another Etikett with an exported store key",
    )
    restore.add_argument("--export", required=True, help="exportCredentialMasterKey's answer")
    restore.add_argument(
        "--items", required=True, help="the old credentials table: `aws dynamodb scan` output"
    )
    restore.add_argument("--to", default=None, help="the target's base URL (none: only check)")
    restore.add_argument("--token", default=None, help="an admin token of the target")
    arguments = parser.parse_args(argv)
    if arguments.command == "restore-credentials":
        # The restore command's own module, loaded only for it.
        from etikett.local.restore import restore as restore_credentials

        return restore_credentials(
            Path(arguments.export), Path(arguments.items), arguments.to, arguments.token
        )
    if arguments.command == "dev":
        if arguments.home is None:
            explicit = "ETIKETT_HOME" in os.environ and os.environ["ETIKETT_HOME"]
            arguments.home = str(local.home if explicit or not arguments.demo else DEMO_HOME)
        if arguments.template is None:
            arguments.template = str(templates.find())
        return dev(arguments)
    return 2


if __name__ == "__main__":
    sys.exit(main())
