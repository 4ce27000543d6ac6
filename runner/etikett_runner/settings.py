"""Where the service is, and where deployed flows work: from the command line, the installer's
`config.json` (`{server_url, agent_url, group_id, ca_file, data_dir, watch_roots, listen,
listen_host_names}`, `ca_file`, `data_dir` and `watch_roots` relative to the config file) and
what the state directory remembers from earlier starts; in that order of precedence. The merged
settings are saved in the state directory, so later starts need only `--state-dir`."""

from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from etikett_runner.roots import AllowedRoots
from etikett_runner.state import StateDir


class SettingsError(ValueError):
    """The Runner can't start with what it was given."""


@dataclass(frozen=True)
class Settings:
    server_url: str
    agent_url: str
    ca_file: str | None = None
    name: str | None = None
    group_id: str | None = None
    data_dir: str | None = None  # deployed flows' relative folders and files; default DIR/data
    # Folders besides the data folder that deployed flows may watch (the site's choice).
    watch_roots: tuple[str, ...] | None = None
    listen: str | None = None  # [HOST:]PORT for HTTP triggers; none: no HTTP triggers
    listen_host_names: tuple[str, ...] | None = None  # Host names HTTP triggers answer to
    # False: agent_url was not given (--agent-url, config, an earlier start) but taken from the
    # enrollment answer or defaulted to the server; such a value is not saved as a choice.
    agent_url_given: bool = True

    def ca_files(self, state: StateDir) -> list[Path]:
        """CAs to trust besides the system's: the service CA from enrollment, and `ca_file`."""
        files = [state.ca]
        if self.ca_file:
            files.append(Path(self.ca_file))
        return files

    def flow_folder(self, state: StateDir) -> Path:
        return Path(self.data_dir) if self.data_dir else state.root / "data"

    def listen_address(self) -> tuple[str, int] | None:
        return parse_listen(self.listen) if self.listen else None

    def allowed_roots(self, state: StateDir) -> AllowedRoots:
        return AllowedRoots.of(self.flow_folder(state), self.watch_roots or (), state.root)


def parse_listen(text: str) -> tuple[str, int]:
    """`PORT`, `HOST:PORT` or `[IPv6]:PORT`; the host defaults to loopback."""
    host, _, port = str(text).strip().rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    try:
        number = int(port)
    except ValueError:
        raise SettingsError(f"--listen wants [HOST:]PORT, not {text!r}") from None
    if not 0 <= number <= 65535:
        raise SettingsError(f"--listen: {number} is not a port")
    return host, number


def _url(value: Any, what: str) -> str | None:
    """An https:// URL, or plain http:// to loopback (the service on this very machine): the
    enrollment token, the CSR and every job travel over it, never in clear text on a network."""
    if value is None or value == "":
        return None
    text = str(value).strip().rstrip("/")
    if not text.startswith(("http://", "https://")):
        raise SettingsError(f"{what} must start with https://: {text!r}")
    if text.startswith("http://") and not _loopback(urlsplit(text).hostname or ""):
        raise SettingsError(
            f"{what} must be https:// (plain http:// only to 127.0.0.1, ::1 or localhost): {text!r}"
        )
    return text


def _loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SettingsError(f"{path} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{path} must hold a JSON object")
    for key in ("ca_file", "data_dir"):
        if value.get(key):
            value[key] = str((path.parent / str(value[key])).resolve())
    for key in ("watch_roots", "listen_host_names"):
        if value.get(key) is not None and not (
            isinstance(value[key], list) and all(isinstance(v, str) for v in value[key])
        ):
            raise SettingsError(f"{path}: {key} must be a list of strings")
    if value.get("watch_roots"):
        value["watch_roots"] = [str((path.parent / v).resolve()) for v in value["watch_roots"]]
    return value


def _watch_roots(values: Any) -> tuple[str, ...] | None:
    """Absolute folders (where they really are is looked up at each use; one that does not
    exist yet, say a share not mounted yet, counts once it does)."""
    if not values:
        return None
    roots: list[str] = []
    for value in values:
        text = str(value).strip()
        if not text or "\0" in text:
            raise SettingsError(f"--watch-root: {value!r} is not a folder")
        folder = Path(os.path.abspath(text))
        if folder.exists() and not folder.is_dir():
            raise SettingsError(f"--watch-root: {folder} is not a folder")
        if str(folder) not in roots:
            roots.append(str(folder))
    return tuple(roots)


def _host_names(values: Any) -> tuple[str, ...] | None:
    if not values:
        return None
    names: list[str] = []
    for value in values:
        name = str(value).strip().lower().rstrip(".")
        if not name or not all(c.isalnum() or c in "-._" for c in name) or len(name) > 253:
            raise SettingsError(f"--listen-host-name: {value!r} is not a host name")
        if name not in names:
            names.append(name)
    return tuple(names)


def resolve(
    state: StateDir,
    *,
    server: str | None = None,
    agent_url: str | None = None,
    ca_file: str | None = None,
    name: str | None = None,
    config_file: Path | None = None,
    data_dir: str | None = None,
    listen: str | None = None,
    watch_roots: list[str] | None = None,
    listen_host_names: list[str] | None = None,
) -> Settings:
    saved = state.read_json(state.settings) or {}
    config = read_config_file(config_file) if config_file else {}

    def pick(cli: Any, key: str) -> Any:
        for value in (cli, config.get(key), saved.get(key)):
            if value not in (None, ""):
                return value
        return None

    server_url = _url(pick(server, "server_url"), "--server")
    if server_url is None:
        raise SettingsError(
            "no server URL: give --server (or --config) the first time; later starts read it "
            f"from {state.settings}"
        )
    given = _url(pick(agent_url, "agent_url"), "--agent-url")
    enrolled = (state.read_json(state.service) or {}).get("agent_url")
    agent = given or _url(enrolled, "the enrollment's agent_url") or server_url
    ca = pick(ca_file, "ca_file")
    if ca is not None:
        ca = str(Path(ca).resolve())
        if not Path(ca).is_file():
            raise SettingsError(f"CA file {ca} does not exist")
    folder = pick(data_dir, "data_dir")
    if folder is not None:
        folder = str(Path(folder).resolve())
    address = pick(listen, "listen")
    if address is not None:
        parse_listen(address)
    roots = _watch_roots(pick(watch_roots, "watch_roots"))
    names = _host_names(pick(listen_host_names, "listen_host_names"))
    return Settings(
        server_url=server_url,
        agent_url=agent,
        ca_file=ca,
        name=pick(name, "name"),
        group_id=pick(None, "group_id"),
        data_dir=folder,
        watch_roots=roots,
        listen=None if address is None else str(address),
        listen_host_names=names,
        agent_url_given=given is not None,
    )


def save(state: StateDir, settings: Settings) -> None:
    values = {
        k: list(v) if isinstance(v, tuple) else v
        for k, v in asdict(settings).items()
        if v is not None
    }
    del values["agent_url_given"]
    if not settings.agent_url_given:
        del values["agent_url"]
    if state.read_json(state.settings) != values:
        state.write_json(state.settings, values)
