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
_SKIP = {"__pycache__", "tests", ".pytest_cache", "build", "dist", "installer"}
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
    "dsl/origins.py",
    "dsl/strict.py",
    "flows/",
)

# The install scripts live beside the Runner's package (runner/installer/), as the files they are.
SCRIPTS = {"install.sh": 0o755, "install.ps1": 0o644}


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
        for name, mode in SCRIPTS.items():
            script = zipfile.ZipInfo(f"{folder}/{name}")
            script.external_attr = mode << 16
            archive.writestr(script, (_runner_package() / "installer" / name).read_bytes())
        archive.writestr(
            f"{folder}/README.txt",
            (
                f"Etikett Runner for the group {group.name} ({group_id}).\n"
                "Linux: sudo sh install.sh [--watch-root FOLDER]...\n"
                "Windows: install.ps1 [-WatchRoot FOLDER, ...] in an elevated PowerShell.\n"
                "--watch-root / -WatchRoot: folders deployed flows may watch besides the "
                "Runner's data folder.\n"
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
