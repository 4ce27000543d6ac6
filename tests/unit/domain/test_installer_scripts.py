"""The install scripts a Runner installer ships (runner/installer/): install.sh's watch roots in
the systemd unit (ExecStart and ReadWritePaths) and what it refuses, run for real with the
system's /bin/sh in its printing mode; install.ps1's order (the state folder made with its
access list in one call and checked, the enrollment token written only after) read as text —
no PowerShell on this machine, the script is not run here; and the Windows service keeping the
new options."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from etikett_runner import windows_service

SCRIPTS = Path(__file__).resolve().parents[3] / "runner" / "installer"
STATE = "/var/lib/etikett-runner"


def install_sh(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["/bin/sh", str(SCRIPTS / "install.sh"), "--print-unit", *arguments],
        capture_output=True,
        text=True,
        timeout=30,
    )


def unit_line(unit: str, key: str) -> str:
    (line,) = [line for line in unit.splitlines() if line.startswith(f"{key}=")]
    return line.removeprefix(f"{key}=")


def test_install_sh_puts_the_watch_roots_into_the_unit() -> None:
    plain = install_sh()
    assert plain.returncode == 0, plain.stderr
    assert unit_line(plain.stdout, "ReadWritePaths") == STATE
    assert "--watch-root" not in unit_line(plain.stdout, "ExecStart")
    assert unit_line(plain.stdout, "ProtectSystem") == "strict"

    rooted = install_sh("--watch-root", "/srv/labels/in", "--watch-root=/mnt/erp-share/out/")
    assert rooted.returncode == 0, rooted.stderr
    assert unit_line(rooted.stdout, "ExecStart").endswith(
        f"--state-dir {STATE} --enrollment-token-file {STATE}/enrollment-token"
        " --watch-root /srv/labels/in --watch-root /mnt/erp-share/out"
    )
    # Writable for the service (a folder not mounted yet is no error: "-").
    assert unit_line(rooted.stdout, "ReadWritePaths") == (
        f"{STATE} -/srv/labels/in -/mnt/erp-share/out"
    )


@pytest.mark.parametrize(
    ("root", "why"),
    [
        ("/", "would hold everything"),
        ("/var/lib", "holds the Runner's state directory"),
        ("/var/lib/etikett-runner", "holds the Runner's state directory"),
        ("/var/lib/etikett-runner/data", "lies inside the Runner's state directory"),
        ("srv/labels", "must be an absolute path"),
        ("/srv/../var/lib/etikett-runner", "no . or .. segments"),
        ("/srv/labels in", "letters, digits"),
        ("/srv/%h", "letters, digits"),  # a systemd specifier
        ("/srv/$(id)", "letters, digits"),
    ],
)
def test_install_sh_refuses_roots_that_could_reach_the_key(root: str, why: str) -> None:
    refused = install_sh("--watch-root", root)
    assert refused.returncode == 2 and refused.stdout == ""
    assert why in refused.stderr


def test_install_sh_makes_the_state_directory_before_the_token_goes_in() -> None:
    text = (SCRIPTS / "install.sh").read_text()
    made = text.index('install -d -m 0700 -o etikett-runner "$state"')
    token = text.index('install -m 0600 -o etikett-runner "$here/enrollment-token"')
    printing = text.index('if [ -n "$print_unit" ]')
    assert printing < text.index("useradd") < made < token  # --print-unit changes nothing


def _statements(text: str) -> list[str]:
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def test_install_ps1_creates_the_state_folder_with_its_acl_then_writes_the_token() -> None:
    text = (SCRIPTS / "install.ps1").read_text()
    code = _statements(text)
    assert code[0] == "param([string[]]$WatchRoot = @())"  # the first statement of a script
    position = {
        name: text.index(name)
        for name in (
            "$acl.SetOwner($admins)",
            "$acl.SetAccessRuleProtection($true, $false)",
            "if (Test-Path -LiteralPath $state) {",
            "[System.IO.FileSystemAclExtensions]::Create(",
            "[void][System.IO.Directory]::CreateDirectory($state, $acl)",
            "Assert-StateFolder $state\n",
            "[System.IO.FileMode]::CreateNew",
            "--enrollment-token-file $token @roots",
        )
    }
    order = list(position.values())
    assert order == sorted(order), position
    # The state folder is made in one call with its access list, never made open and closed
    # later, and nothing is written into it before the check.
    assert not re.search(r"New-Item[^\n]*\$state", text)
    assert "/inheritance:r" not in text and "/grant" not in text
    writes = ("Copy-Item", "[System.IO.File]::Open(", "Set-Content", "Out-File")
    first_write = min(text.index(m) for m in writes if m in text)
    assert first_write > position["Assert-StateFolder $state\n"]
    assert not re.search(r"Copy-Item[^\n]*enrollment-token", text)
    # An existing folder must be Administrators' or SYSTEM's, with no link inside.
    assert "S-1-5-18" in text and "S-1-5-32-544" in text
    assert "ReparsePoint" in text and "takeown /F" in text


def test_install_ps1_refuses_watch_roots_that_overlap_the_state_folder() -> None:
    text = (SCRIPTS / "install.ps1").read_text()
    loop = text[text.index("foreach ($root in $WatchRoot)") : text.index("New-Item -ItemType")]
    assert "GetFullPath" in loop and "StartsWith($stateFolder" in loop
    assert "throw \"-WatchRoot $root overlaps the Runner's state folder" in loop
    assert '$roots += @("--watch-root", $full)' in loop


def test_the_windows_service_keeps_watch_roots_and_flow_options() -> None:
    ours, theirs = windows_service.split_arguments(
        [
            "--startup",
            "auto",
            "update",
            "--state-dir",
            r"C:\ProgramData\Etikett Runner",
            "--watch-root",
            "labels",
            "--watch-root",
            r"E:\Export",
            "--listen",
            "127.0.0.1:8080",
            "--listen-host-name",
            "labels-pc",
            "--outgoing-private-networks",
        ]
    )
    assert theirs == ["--startup", "auto", "update"]
    assert ours[2:] == [
        "--watch-root",
        "labels",
        "--watch-root",
        r"E:\Export",
        "--listen",
        "127.0.0.1:8080",
        "--listen-host-name",
        "labels-pc",
        "--outgoing-private-networks",
    ]
    absolute = windows_service._absolute(ours)
    assert absolute[absolute.index("--watch-root") + 1] == str(Path("labels").resolve())
