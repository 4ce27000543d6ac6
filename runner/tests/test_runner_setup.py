"""Starting up: settings from the command line, the installer's config.json and the state
directory; the private key's file mode; one Runner per state directory; discovery probes; the
Windows service wrapper imports without pywin32."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from etikett_runner import windows_service
from etikett_runner.discovery import discover
from etikett_runner.identity import certificate_request, create_key
from etikett_runner.printer_sim import PrinterSimulator
from etikett_runner.settings import SettingsError, resolve, save
from etikett_runner.state import StateDir, StateLocked
from etikett_runner.targets import Address


def test_settings_come_from_the_installer_config_then_are_remembered(tmp_path: Path) -> None:
    install = tmp_path / "opt"
    install.mkdir()
    (install / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\n")
    config = install / "config.json"
    config.write_text(
        json.dumps(
            {
                "server_url": "https://etikett.example/",
                "agent_url": "https://agent.etikett.example",
                "group_id": "rgp_1",
                "group_name": "Halle 1",
                "ca_file": "ca.pem",
            }
        )
    )
    state = StateDir(tmp_path / "state")
    state.create()
    settings = resolve(state, config_file=config)
    assert settings.server_url == "https://etikett.example"
    assert settings.agent_url == "https://agent.etikett.example"
    assert settings.ca_file == str(install / "ca.pem")  # relative to the config file
    assert settings.group_id == "rgp_1"
    save(state, settings)
    later = resolve(state)  # only --state-dir
    assert later == settings
    overridden = resolve(state, server="http://127.0.0.1:8000", name="Linie 3")
    assert overridden.server_url == "http://127.0.0.1:8000" and overridden.name == "Linie 3"
    assert overridden.agent_url == "https://agent.etikett.example"


def test_settings_need_a_server_and_sane_values(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    state.create()
    with pytest.raises(SettingsError, match="no server URL"):
        resolve(state)
    with pytest.raises(SettingsError, match="http"):
        resolve(state, server="etikett.example")
    with pytest.raises(SettingsError, match="does not exist"):
        resolve(state, server="https://x", ca_file=str(tmp_path / "missing.pem"))
    assert resolve(state, server="https://x").agent_url == "https://x"


@pytest.mark.parametrize(
    ("server", "agent"),
    [
        ("http://etikett.example", None),
        ("http://192.168.1.10:8000", None),
        ("http://127.0.0.1.nip.example:8000", None),
        ("https://etikett.example", "http://agent.etikett.example"),
    ],
)
def test_plain_http_is_refused_except_to_loopback(
    tmp_path: Path, server: str, agent: str | None
) -> None:
    """The enrollment token, the CSR and every job travel to the server: never in clear text
    over a network (only loopback, where the service runs on the same machine)."""
    state = StateDir(tmp_path / "state")
    state.create()
    with pytest.raises(SettingsError, match="https://"):
        resolve(state, server=server, agent_url=agent)


@pytest.mark.parametrize(
    "server", ["http://127.0.0.1:8000", "http://localhost:8000", "http://[::1]:8000"]
)
def test_plain_http_to_loopback_is_fine(tmp_path: Path, server: str) -> None:
    state = StateDir(tmp_path / "state")
    state.create()
    assert resolve(state, server=server).server_url == server


def test_the_key_is_private_from_the_start(tmp_path: Path) -> None:
    os.umask(0o022)
    key = tmp_path / "key.pem"
    create_key(key)
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    assert b"PRIVATE KEY" in key.read_bytes()
    assert "CERTIFICATE REQUEST" in certificate_request(key, "host-1")


def test_one_runner_per_state_directory(tmp_path: Path) -> None:
    first = StateDir(tmp_path / "state")
    first.create()
    first.lock()
    code = (
        "import sys; from pathlib import Path; from etikett_runner.state import StateDir, "
        "StateLocked\ntry:\n    StateDir(Path(sys.argv[1])).lock()\nexcept StateLocked:\n"
        "    sys.exit(3)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(first.root)], timeout=30)
    assert result.returncode == 3
    with pytest.raises(ValueError):
        first.spool_path("../escape")
    assert issubclass(StateLocked, RuntimeError)


def test_a_runner_without_identity_or_token_says_what_is_missing(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "etikett_runner",
            "--server",
            "http://127.0.0.1:9",
            "--state-dir",
            str(tmp_path / "state"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "ETIKETT_ENROLLMENT_TOKEN"},
    )
    assert result.returncode == 77, result.stderr
    assert "--enrollment-token" in result.stderr
    assert stat.S_IMODE((tmp_path / "state").stat().st_mode) == 0o700


def test_discovery_finds_printers_and_skips_closed_ports() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    with (
        PrinterSimulator(port=0, dpi=203, model="ZT411") as one,
        PrinterSimulator(port=0, dpi=300, model="ZT610") as two,
    ):
        two.set_condition(paper_out=True)
        found = discover(
            [
                Address("127.0.0.1", one.port),
                Address("127.0.0.1", closed),
                Address("127.0.0.1", two.port),
            ]
        )
    assert [(f["address"], f["model"], f["dpi"], f["status"]) for f in found] == [
        (f"127.0.0.1:{one.port}", "ZT411", 203, "ready"),
        (f"127.0.0.1:{two.port}", "ZT610", 300, "paper_out"),
    ]
    assert all(f["firmware"] for f in found)


def test_the_windows_service_wrapper_splits_its_arguments() -> None:
    ours, theirs = windows_service.split_arguments(
        [
            "--startup",
            "auto",
            "install",
            "--config",
            r"C:\Program Files\Etikett Runner\config.json",
            "--state-dir=C:\\ProgramData\\Etikett Runner",
            "--enrollment-token-file",
            "token",
        ]
    )
    assert theirs == ["--startup", "auto", "install"]
    assert ours == [
        "--config",
        r"C:\Program Files\Etikett Runner\config.json",
        "--state-dir=C:\\ProgramData\\Etikett Runner",
        "--enrollment-token-file",
        "token",
    ]
    interpreter, arguments = windows_service.service_command_line()
    assert Path(interpreter).exists() and arguments.startswith('-c "import site;')
    with pytest.raises(ImportError):
        windows_service.main(["x", "install"])  # pywin32 is needed only on Windows
