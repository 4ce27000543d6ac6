"""Starting up: settings from the command line, the installer's config.json and the state
directory; the private key's file mode; the state directory this user's alone (tightened,
refused if another's) and apart from every folder flows may use; one Runner per state
directory; discovery probes; the Windows service wrapper imports without pywin32."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from etikett_runner import cli, windows_service
from etikett_runner.discovery import discover
from etikett_runner.identity import certificate_request, create_key
from etikett_runner.printer_sim import PrinterSimulator
from etikett_runner.settings import SettingsError, resolve, save
from etikett_runner.state import StateDir, StateLocked, StateRefused
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


def test_watch_roots_and_host_names_are_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    (site / "labels").mkdir(parents=True)
    config = tmp_path / "opt" / "config.json"
    config.parent.mkdir()
    config.write_text(
        json.dumps({"server_url": "https://etikett.example", "watch_roots": ["../site/labels"]})
    )
    state = StateDir(tmp_path / "state")
    state.create()
    settings = resolve(state, config_file=config, listen_host_names=["Runner-1.Site.example."])
    assert settings.watch_roots == (str(site / "labels"),)  # relative to the config file
    assert settings.listen_host_names == ("runner-1.site.example",)
    save(state, settings)
    assert resolve(state) == settings  # later starts: only --state-dir
    changed = resolve(state, watch_roots=[str(site), str(site / "missing-share")])
    assert changed.watch_roots == (str(site), str(site / "missing-share"))  # may come later
    allowed = changed.allowed_roots(state)
    assert allowed.roots == (state.root / "data", site, site / "missing-share")
    (site / "file").write_text("x")
    with pytest.raises(SettingsError, match="not a folder"):
        resolve(state, watch_roots=[str(site / "file")])
    with pytest.raises(SettingsError, match="not a host name"):
        resolve(state, listen_host_names=["evil.example/x"])
    monkeypatch.setenv("ETIKETT_RUNNER_WATCH_ROOTS", f"{site}{os.pathsep}{tmp_path / 'b'}")
    args = cli.build_parser().parse_args(["--state-dir", str(state.root)])
    assert args.watch_root == [str(site), str(tmp_path / "b")]


def _start(tmp_path: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """`etikett-runner` as far as it goes without a service (exit 77: no token)."""
    return subprocess.run(
        [sys.executable, "-m", "etikett_runner", "--server", "http://127.0.0.1:9", *arguments],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("ETIKETT_")},
    )


def test_the_runner_keeps_its_state_directory_apart_from_every_root(tmp_path: Path) -> None:
    state = tmp_path / "site" / "runner-state"
    for arguments, why in (
        (["--watch-root", str(tmp_path / "site")], "lies inside the allowed folder"),
        (["--data-dir", str(state)], "lies inside the allowed folder"),
        (["--watch-root", str(state / "outbox")], "lies inside the state directory"),
    ):
        result = _start(tmp_path, "--state-dir", str(state), *arguments)
        assert result.returncode == 2, result.stderr
        assert why in result.stderr and "could read or move its key" in result.stderr
    # Apart, or the state directory's own data folder (the default): it goes on to enroll.
    result = _start(tmp_path, "--state-dir", str(state), "--watch-root", str(tmp_path / "in"))
    assert result.returncode == 77, result.stderr
    assert f"deployed flows may use {state / 'data'}, {tmp_path / 'in'}" in result.stderr
    assert "does not exist (yet)" in result.stderr


def test_an_existing_state_directory_is_tightened(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    StateDir(root).create()
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert "was mode 755: tightened to 0700" in caplog.text


def test_a_state_directory_another_user_could_touch_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "state"
    state = StateDir(root)
    state.create()
    (root / "outbox").mkdir()
    (root / "outbox" / "job_1.json").symlink_to(tmp_path / "elsewhere.json")
    with pytest.raises(StateRefused, match=r"job_1\.json in the state directory is a symbolic"):
        state.create()
    (root / "outbox" / "job_1.json").unlink()
    state.create()
    real_user = os.geteuid()
    monkeypatch.setattr(os, "geteuid", lambda: real_user + 1)  # another user runs the Runner
    with pytest.raises(StateRefused, match=r"belongs to .*not to .*who runs this Runner"):
        state.create()
    result = _start(tmp_path, "--state-dir", str(root))
    assert result.returncode == 77, result.stderr  # its owner may


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
