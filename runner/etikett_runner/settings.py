"""Where the service is: from the command line, the installer's `config.json`
(`{server_url, agent_url, group_id, ca_file}`, `ca_file` relative to the config file) and what the
state directory remembers from earlier starts; in that order of precedence. The merged settings
are saved in the state directory, so later starts need only `--state-dir`."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

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
    # False: agent_url was not given (--agent-url, config, an earlier start) but taken from the
    # enrollment answer or defaulted to the server; such a value is not saved as a choice.
    agent_url_given: bool = True

    def ca_files(self, state: StateDir) -> list[Path]:
        """CAs to trust besides the system's: the service CA from enrollment, and `ca_file`."""
        files = [state.ca]
        if self.ca_file:
            files.append(Path(self.ca_file))
        return files


def _url(value: Any, what: str) -> str | None:
    if value is None or value == "":
        return None
    text = str(value).strip().rstrip("/")
    if not text.startswith(("http://", "https://")):
        raise SettingsError(f"{what} must start with http:// or https://: {text!r}")
    return text


def read_config_file(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text("utf-8"))
    except OSError as exc:
        raise SettingsError(f"cannot read {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise SettingsError(f"{path} is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise SettingsError(f"{path} must hold a JSON object")
    ca_file = value.get("ca_file")
    if ca_file:
        value["ca_file"] = str((path.parent / str(ca_file)).resolve())
    return value


def resolve(
    state: StateDir,
    *,
    server: str | None = None,
    agent_url: str | None = None,
    ca_file: str | None = None,
    name: str | None = None,
    config_file: Path | None = None,
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
    return Settings(
        server_url=server_url,
        agent_url=agent,
        ca_file=ca,
        name=pick(name, "name"),
        group_id=pick(None, "group_id"),
        agent_url_given=given is not None,
    )


def save(state: StateDir, settings: Settings) -> None:
    values = {k: v for k, v in asdict(settings).items() if v is not None}
    del values["agent_url_given"]
    if not settings.agent_url_given:
        del values["agent_url"]
    if state.read_json(state.settings) != values:
        state.write_json(state.settings, values)
