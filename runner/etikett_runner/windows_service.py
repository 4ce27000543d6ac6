"""The Runner as a Windows service (`EtikettRunner`), with pywin32.

    python -m etikett_runner.windows_service --startup auto install \
        --config C:\\…\\config.json --state-dir C:\\ProgramData\\… --enrollment-token-file …

Our options (`--config`, `--state-dir`, …: those of `etikett-runner`) are stored in the service's
registry key (`Parameters\\RunnerArguments`); pywin32 handles the rest (`install`, `update`,
`remove`, `start`, `stop`, `--startup`, …). The service runs the base interpreter with this
virtual environment's site-packages added (pywin32's `pythonservice.exe` does not find a venv),
and logs to `runner.log` in the state directory. pywin32 is imported only here, on use, so the
module imports on any system.
"""

from __future__ import annotations

import json
import sys
import sysconfig
import threading
from pathlib import Path
from typing import Any

SERVICE_NAME = "EtikettRunner"
DISPLAY_NAME = "Etikett Runner"
DESCRIPTION = "Takes print jobs from the Etikett service and sends them to label printers."
ARGUMENTS_OPTION = "RunnerArguments"
# etikett-runner options that take a value, and those that don't.
VALUE_OPTIONS = frozenset(
    {
        "--state-dir",
        "--server",
        "--agent-url",
        "--ca-file",
        "--config",
        "--enrollment-token",
        "--enrollment-token-file",
        "--name",
        "--log-level",
        "--log-file",
        "--heartbeat-seconds",
        "--unreachable-seconds",
        "--held-recheck-seconds",
        "--confirm-seconds",
        "--workers",
        "--flows-seconds",
        "--flow-retry-seconds",
        "--listen",
        "--listen-host-name",
        "--data-dir",
        "--watch-root",
        "--http-rate",
        "--http-burst",
    }
)
FLAG_OPTIONS = frozenset({"--loopback-printers", "--outgoing-private-networks"})


def split_arguments(argv: list[str]) -> tuple[list[str], list[str]]:
    """(etikett-runner's options, pywin32's command line) from one argument list."""
    ours: list[str] = []
    theirs: list[str] = []
    items = iter(argv)
    for item in items:
        name = item.split("=", 1)[0]
        if name in VALUE_OPTIONS:
            ours.append(item)
            if "=" not in item:
                ours.append(next(items, ""))
        elif name in FLAG_OPTIONS:
            ours.append(item)
        else:
            theirs.append(item)
    return ours, theirs


def service_command_line() -> tuple[str, str]:
    """(interpreter, arguments) the service control manager starts."""
    interpreter = getattr(sys, "_base_executable", None) or sys.executable
    site_packages = sysconfig.get_paths()["purelib"]
    code = (
        f"import site; site.addsitedir({site_packages!r}); "
        "from etikett_runner.windows_service import main; main()"
    )
    return interpreter, f'-c "{code}"'


def _absolute(arguments: list[str]) -> list[str]:
    """Paths as the service will see them (it starts in C:\\Windows\\System32)."""
    paths = {
        "--state-dir",
        "--config",
        "--ca-file",
        "--enrollment-token-file",
        "--log-file",
        "--data-dir",
        "--watch-root",
    }
    result = list(arguments)
    for index, item in enumerate(result[:-1]):
        if item in paths:
            result[index + 1] = str(Path(result[index + 1]).resolve())
    return result


def _service_class() -> Any:
    import servicemanager
    import win32service
    import win32serviceutil

    # pywin32 ships no types: its base class is Any to mypy
    class EtikettRunner(win32serviceutil.ServiceFramework):  # type: ignore[misc]
        _svc_name_ = SERVICE_NAME
        _svc_display_name_ = DISPLAY_NAME
        _svc_description_ = DESCRIPTION
        _exe_name_, _exe_args_ = service_command_line()

        def __init__(self, args: Any) -> None:
            super().__init__(args)
            self.stop_requested = threading.Event()

        def SvcStop(self) -> None:  # pywin32's method names
            self.ReportServiceStatus(win32service.SERVICE_STOP_PENDING, waitHint=30_000)
            self.stop_requested.set()

        def SvcDoRun(self) -> None:
            from etikett_runner.cli import build_parser, configure_logging, run

            stored = win32serviceutil.GetServiceCustomOption(SERVICE_NAME, ARGUMENTS_OPTION)
            arguments = json.loads(stored) if stored else []
            args = build_parser().parse_args(arguments)
            log_file = args.log_file or args.state_dir / "runner.log"
            args.state_dir.mkdir(parents=True, exist_ok=True)
            configure_logging(args.log_level, log_file)
            servicemanager.LogInfoMsg(f"{DISPLAY_NAME} starting; log: {log_file}")
            status = run(args, self.stop_requested)
            servicemanager.LogInfoMsg(f"{DISPLAY_NAME} stopped (exit status {status})")

    return EtikettRunner


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv if argv is None else argv)
    service = _service_class()
    import servicemanager
    import win32serviceutil

    if len(argv) <= 1:  # started by the service control manager
        servicemanager.Initialize()
        servicemanager.PrepareToHostSingle(service)
        servicemanager.StartServiceCtrlDispatcher()
        return 0
    ours, theirs = split_arguments(argv[1:])

    def store_arguments(options: Any) -> None:
        if ours:
            value = json.dumps(_absolute(ours))
            win32serviceutil.SetServiceCustomOption(SERVICE_NAME, ARGUMENTS_OPTION, value)

    return int(
        win32serviceutil.HandleCommandLine(
            service,
            serviceClassString="etikett_runner.windows_service.EtikettRunner",
            argv=[argv[0], *theirs],
            customOptionHandler=store_arguments,
        )
        or 0
    )


if __name__ == "__main__":
    sys.exit(main())
