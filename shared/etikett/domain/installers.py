"""Runner installers: a zip with the Runner package (with the flow engine it runs deployed flows
on), its configuration (server URLs, the CA bundle), a fresh one-time enrollment token and
install scripts for Linux (systemd) and Windows (a service), stored in S3 and handed out as a
short-lived presigned URL."""

import io
import json
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain import audit, certificates, runner_enrollment, runner_records
from etikett.domain.actors import Invocation
from etikett.model import Model
from etikett.settings import get_settings
from etikett.store import assets
from etikett.store.unit_of_work import UnitOfWork

DOWNLOAD_LIFETIME = timedelta(hours=1)
_SKIP = {"__pycache__", "tests", ".pytest_cache", "build", "dist"}
# The flow engine and everything of etikett it imports: the Runner's copy of the one engine
# (runner/pyproject.toml installs these beside etikett_runner).
ENGINE_FILES = (
    "__init__.py",
    "cel/",
    "outgoing.py",
    "printer_data.py",
    "errors.py",
    "dsl/__init__.py",
    "dsl/flow.py",
    "dsl/flow_registry.py",
    "dsl/label.py",
    "dsl/strict.py",
    "flows/",
)

INSTALL_SH = """#!/bin/sh
# Installs the Etikett Runner as a systemd service. Run as root: sudo sh install.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=/opt/etikett-runner
state=/var/lib/etikett-runner
id -u etikett-runner >/dev/null 2>&1 || useradd --system --home "$state" --shell /usr/sbin/nologin etikett-runner
install -d -m 0755 "$prefix"
install -d -m 0700 -o etikett-runner "$state"
python3 -m venv "$prefix/venv"
"$prefix/venv/bin/pip" install --quiet "$here/runner"
install -m 0644 "$here/ca.pem" "$prefix/ca.pem"
install -m 0644 "$here/config.json" "$prefix/config.json"
install -m 0600 -o etikett-runner "$here/enrollment-token" "$state/enrollment-token"
cat > /etc/systemd/system/etikett-runner.service <<UNIT
[Unit]
Description=Etikett Runner
After=network-online.target
Wants=network-online.target

[Service]
User=etikett-runner
ExecStart=$prefix/venv/bin/etikett-runner --config $prefix/config.json --state-dir $state --enrollment-token-file $state/enrollment-token
Restart=always
# 77: the enrollment was refused; 78: the service removed this Runner. Restarting cannot help.
RestartPreventExitStatus=77 78
RestartSec=5
NoNewPrivileges=true
ProtectSystem=strict
ReadWritePaths=$state

[Install]
WantedBy=multi-user.target
UNIT
systemctl daemon-reload
systemctl enable --now etikett-runner
echo "Etikett Runner installed; see: journalctl -u etikett-runner -f"
"""

INSTALL_PS1 = r"""# Installs the Etikett Runner as a Windows service. Run in an elevated PowerShell:
#   powershell -ExecutionPolicy Bypass -File install.ps1
$ErrorActionPreference = "Stop"
$here = Split-Path -Parent $MyInvocation.MyCommand.Path
$prefix = "$env:ProgramFiles\Etikett Runner"
$state = "$env:ProgramData\Etikett Runner"
New-Item -ItemType Directory -Force -Path $prefix, $state | Out-Null
py -3.11 -m venv "$prefix\venv"
& "$prefix\venv\Scripts\pip.exe" install --quiet "$here\runner" pywin32
Copy-Item "$here\ca.pem", "$here\config.json" $prefix -Force
Copy-Item "$here\enrollment-token" "$state\enrollment-token" -Force
icacls $state /inheritance:r /grant:r "SYSTEM:(OI)(CI)F" "Administrators:(OI)(CI)F" | Out-Null
& "$prefix\venv\Scripts\python.exe" -m etikett_runner.windows_service --startup auto install `
    --config "$prefix\config.json" --state-dir "$state" --enrollment-token-file "$state\enrollment-token"
Start-Service EtikettRunner
Write-Host "Etikett Runner installed as the service 'EtikettRunner'."
"""


class InstallerRequest(Model):
    model_config = ConfigDict(extra="forbid")
    needs_approval: bool = Field(
        default=False, description="The enrollment waits for an admin's approval."
    )
    expires_at: datetime | None = Field(
        default=None, description="Of the enclosed token; default 24 hours."
    )


class Installer(Model):
    id: str
    group_id: str
    download_url: str = Field(description="Presigned; valid for one hour.")
    download_expires_at: str
    enrollment_token_id: str
    enrollment_token_expires_at: str
    needs_approval: bool
    size_bytes: int


def _runner_package() -> Path:
    configured = get_settings().runner_package_dir
    if configured is not None and configured.is_dir():
        return configured
    return Path(__file__).resolve().parents[3] / "runner"  # the repository, in local mode


def _add_tree(archive: zipfile.ZipFile, root: Path, prefix: str) -> None:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not (_SKIP & set(relative.parts)) and path.suffix != ".pyc":
            archive.write(path, f"{prefix}/{relative.as_posix()}")


def _add_engine(archive: zipfile.ZipFile, prefix: str) -> None:
    import etikett

    package = Path(etikett.__file__).resolve().parent  # the service's own copy: same engine
    for entry in ENGINE_FILES:
        source = package / entry
        files = sorted(source.glob("*.py")) if entry.endswith("/") else [source]
        for path in files:
            archive.write(path, f"{prefix}/{path.relative_to(package).as_posix()}")


def build(
    invocation: Invocation, group_id: str, request: InstallerRequest, server_url: str
) -> Installer:
    group = runner_records.load_group(group_id)
    token = runner_enrollment.issue_token(
        invocation,
        group_id,
        runner_enrollment.NewEnrollmentToken(
            expires_at=request.expires_at, needs_approval=request.needs_approval
        ),
    )
    agent_url = get_settings().agent_url or server_url
    installer_id = f"ins_{token.id.removeprefix('ent_')}"
    settings = {
        "server_url": server_url,
        "agent_url": agent_url,
        "group_id": group_id,
        "group_name": group.name,
        "ca_file": "ca.pem",
    }
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        folder = "etikett-runner"
        _add_tree(archive, _runner_package(), f"{folder}/runner")
        _add_engine(archive, f"{folder}/runner/etikett")
        archive.writestr(f"{folder}/config.json", json.dumps(settings, indent=2) + "\n")
        archive.writestr(f"{folder}/ca.pem", certificates.ca_pem())
        info = zipfile.ZipInfo(f"{folder}/enrollment-token")
        info.external_attr = 0o600 << 16
        archive.writestr(info, token.token + "\n")
        script = zipfile.ZipInfo(f"{folder}/install.sh")
        script.external_attr = 0o755 << 16
        archive.writestr(script, INSTALL_SH)
        archive.writestr(f"{folder}/install.ps1", INSTALL_PS1)
        archive.writestr(
            f"{folder}/README.txt",
            (
                f"Etikett Runner for the group {group.name} ({group_id}).\n"
                f"Linux: sudo sh install.sh   Windows: install.ps1 in an elevated PowerShell.\n"
                f"The enclosed enrollment token is valid once, until {token.expires_at}"
                f"{', and the enrollment waits for approval' if token.needs_approval else ''}.\n"
            ),
        )
    data = buffer.getvalue()
    key = f"installers/{group_id}/{installer_id}.zip"
    assets.put(key, data, "application/zip")
    url = assets.download_url(key, int(DOWNLOAD_LIFETIME.total_seconds()))
    details = {"installer_id": installer_id, "token_id": token.id, "bytes": len(data)}
    UnitOfWork(audit.record(invocation, group_id, details=details)).commit()
    return Installer(
        id=installer_id,
        group_id=group_id,
        download_url=url,
        download_expires_at=clock.rfc3339(clock.now() + DOWNLOAD_LIFETIME),
        enrollment_token_id=token.id,
        enrollment_token_expires_at=token.expires_at,
        needs_approval=token.needs_approval,
        size_bytes=len(data),
    )
