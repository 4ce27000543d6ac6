"""Runner installers: a zip with the Runner package and the engine's wheel (etikett-engine, the
flow engine it runs deployed flows on), its configuration (server URLs, the CA bundle), a fresh one-time enrollment token and
install scripts for Linux (systemd) and Windows (a service), stored in S3 and handed out as a
short-lived presigned URL."""

import hashlib
import io
import json
import shutil
import subprocess
import sys
import threading
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.runners import certificates, runner_enrollment, runner_records
from etikett.settings import get_settings
from etikett.store import assets
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.model import Model

DOWNLOAD_LIFETIME = timedelta(hours=1)
# Beside the Runner's source: the engine's wheel, which the layer build puts there
# (runner/Makefile) and install.sh / install.ps1 install with the Runner.
PACKAGES = "packages"
ENGINE_WHEEL = "etikett_engine-*.whl"
_BUILD_LOCK = threading.Lock()
# Not shipped from the Runner's folder: caches, tests, builds, the install scripts (the zip has
# them at its top) and the engine's wheel (under packages/ at the zip's top, too).
_SKIP = {"__pycache__", "tests", ".pytest_cache", "build", "dist", "installer", PACKAGES}
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


def _repository() -> Path:
    return Path(__file__).resolve().parents[4]  # local mode runs from the repository


def _runner_package() -> Path:
    configured = get_settings().runner_package_dir
    if configured is not None and configured.is_dir():
        return configured
    return _repository() / "runner"


def _add_tree(archive: zipfile.ZipFile, root: Path, prefix: str) -> None:
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        if path.is_file() and not (_SKIP & set(relative.parts)) and path.suffix != ".pyc":
            archive.write(path, f"{prefix}/{relative.as_posix()}")


def engine_wheel() -> Path:
    """The engine's wheel: the one the layer build put beside the Runner's package (a deployed
    stack), else, in local mode, built from the repository's engine/ once per version of its
    sources (a build takes seconds; an installer request only reads the result)."""
    configured = get_settings().runner_package_dir
    if configured is not None and configured.is_dir():
        wheels = sorted((configured / PACKAGES).glob(ENGINE_WHEEL))
        if len(wheels) != 1:
            raise RuntimeError(f"{configured / PACKAGES} holds {len(wheels)} engine wheels, not 1")
        return wheels[0]
    return _built_engine_wheel(_repository() / "engine")


def _built_engine_wheel(source: Path) -> Path:
    digest = hashlib.sha256()
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if path.is_file() and not (_SKIP & set(relative.parts)) and path.suffix != ".pyc":
            digest.update(relative.as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    # build/ is ignored by git, and by the wheel's own build (engine/Makefile).
    cache = source / "build" / "wheels" / digest.hexdigest()[:16]
    with _BUILD_LOCK:
        if not list(cache.glob(ENGINE_WHEEL)):
            cache.parent.mkdir(parents=True, exist_ok=True)
            scratch = cache.with_name(f"{cache.name}.{threading.get_ident()}.partial")
            shutil.rmtree(scratch, ignore_errors=True)
            command = ["make", "-s", "-C", str(source), "wheel"]
            command += [f"PYTHON={sys.executable}", f"OUT={scratch}"]
            subprocess.run(command, check=True, capture_output=True, timeout=300)
            try:
                scratch.rename(cache)  # whole or not at all: another process may build too
            except OSError:
                shutil.rmtree(scratch, ignore_errors=True)  # it did, first
    return next(cache.glob(ENGINE_WHEEL))


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
        wheel = engine_wheel()
        archive.write(wheel, f"{folder}/{PACKAGES}/{wheel.name}")
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
