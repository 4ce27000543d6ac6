"""`etikett dev --demo`: beside the local service, a printer simulator and a Runner, enrolled and
allowed its loopback printer, the printer adopted, a label released and a folder flow deployed
to `demo/inbox`, so that a CSV dropped there comes out as label PNGs in `demo/labels`.

Everything is made through the public API, as a person would, and remembered in
`$ETIKETT_HOME/demo.json` (mode 0600): a second start finds what exists and makes only what is
missing. The Runner and the simulator are child processes, stopped with the service."""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

logger = logging.getLogger("etikett.demo")

USERNAME = "demo"
STATE_FILE = "demo.json"
VORLAGE = "warehouse-location"
COLUMNS = ("aisle", "rack", "level", "position")
SAMPLE = "aisle,rack,level,position\nA,1,1,A\nA,1,2,A\nA,1,3,B\n"


class DemoFailed(RuntimeError):
    """The demo site could not be set up (the service refused a step, or a part did not start)."""


def _script(name: str) -> str:
    """A console script of this environment (the Runner package's), else one on PATH."""
    beside = Path(sys.executable).with_name(name)
    found = str(beside) if beside.exists() else shutil.which(name)
    if not found:
        raise DemoFailed(f"{name} is not installed (make .venv/.installed installs it)")
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class DemoSite:
    def __init__(
        self, service_url: str, agent_url: str, ca_file: Path, home: Path, folder: Path
    ) -> None:
        self.api = f"{service_url}/api/v1"
        self.service_url = service_url
        self.agent_url = agent_url
        self.ca_file = ca_file
        self.home = home
        self.folder = folder
        self.inbox = folder / "inbox"
        self.labels = folder / "labels"
        self.state_path = home / STATE_FILE
        self.state: dict[str, Any] = {}
        self.http = httpx.Client(timeout=30, trust_env=False)
        self._children: list[tuple[str, subprocess.Popen[bytes]]] = []

    # --- state --------------------------------------------------------------------------------

    def _load(self) -> None:
        if self.state_path.exists():
            self.state = json.loads(self.state_path.read_text())

    def _save(self) -> None:
        temporary = self.state_path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump(self.state, file, indent=2)
        temporary.replace(self.state_path)

    # --- the API ------------------------------------------------------------------------------

    def _call(self, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        headers = (
            {"authorization": f"Bearer {self.state['token']}"} if "token" in self.state else {}
        )
        answer = self.http.request(method, self.api + path, json=body, headers=headers)
        if answer.status_code != expect:
            raise DemoFailed(f"{method} {path}: {answer.status_code} {answer.text[:400]}")
        return answer.json() if answer.content else None

    def _exists(self, key: str, path: str) -> bool:
        """Whether the resource remembered under `key` is still there (GET `path` + its id)."""
        if key not in self.state:
            return False
        headers = {"authorization": f"Bearer {self.state['token']}"}
        found = self.http.get(f"{self.api}{path}/{self.state[key]}", headers=headers)
        return found.status_code == 200

    def _sign_in(self) -> None:
        if self._call("GET", "/auth/setup")["setup_required"]:
            self.state["password"] = secrets.token_urlsafe(12)
            body = {"username": USERNAME, "password": self.state["password"]}
            self.state["token"] = self._call("POST", "/auth/setup", body, expect=201)["token"]
            self._save()
            return
        if "password" not in self.state:
            raise DemoFailed(
                f"this service's first admin was made without the demo ({self.home}); "
                "run the demo with a home of its own: ETIKETT_HOME=.etikett-demo make demo"
            )
        self.state.pop("token", None)
        body = {"username": USERNAME, "password": self.state["password"]}
        self.state["token"] = self._call("POST", "/auth/login", body)["token"]

    # --- the parts ----------------------------------------------------------------------------

    def _start_printer(self) -> None:
        self.state.setdefault("printer_port", _free_port())
        self._save()
        self._spawn(
            "printer.log",
            _script("etikett-printer-sim"),
            "--port",
            str(self.state["printer_port"]),
            "--out",
            str(self.labels),
        )

    def _start_runner(self) -> None:
        state_dir = self.home / "demo-runner"
        arguments = ["--state-dir", str(state_dir), "--server", self.service_url]
        # Named each start: the agent channel's port may differ from the one it enrolled with.
        arguments += ["--agent-url", self.agent_url, "--ca-file", str(self.ca_file)]
        # The watched folder lies inside the Runner's data folder; the simulator is on this
        # machine's loopback, which a Runner reaches only when told so.
        arguments += ["--data-dir", str(self.folder), "--loopback-printers", "--name", "demo"]
        groups = self._call("GET", "/runner-groups?limit=200")["items"]  # no GET of one group
        if self.state.get("group_id") not in {group["id"] for group in groups}:
            group = self._call("POST", "/runner-groups", {"name": "Demo"}, expect=201)
            self.state["group_id"] = group["id"]
            self.state.pop("runner_id", None)
            shutil.rmtree(state_dir, ignore_errors=True)  # enrolled in a group that is gone
        if not (state_dir / "certificate.pem").exists():
            token = self._call(
                "POST", f"/runner-groups/{self.state['group_id']}/enrollment-tokens", {}, 201
            )
            arguments += ["--enrollment-token", token["token"]]
        self._save()
        self._spawn("runner.log", _script("etikett-runner"), *arguments)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            runners = self._call("GET", f"/runners?group_id={self.state['group_id']}")["items"]
            if runners:
                self.state["runner_id"] = runners[0]["id"]
                self._save()
                return
            self._check_children()
            time.sleep(0.5)
        raise DemoFailed(f"the demo Runner did not enroll; see {self.folder / 'runner.log'}")

    def _ensure_printer(self) -> None:
        uri = f"tcp://127.0.0.1:{self.state['printer_port']}"
        mine = self._call("GET", f"/printers?runner_id={self.state['runner_id']}")["items"]
        if self.state.get("printer_id") in {printer["id"] for printer in mine}:
            return  # (there is no GET of one printer)
        body = {
            "name": f"Demo printer {self.state['runner_id'][-6:]}",
            "runner_id": self.state["runner_id"],
            "uri": uri,
            "language": "zpl",
            "dpi": 203,
        }
        self.state["printer_id"] = self._call("POST", "/printers", body, expect=201)["id"]
        self._save()

    def _ensure_label(self) -> None:
        if self._exists("label_id", "/labels"):
            return
        body = {"vorlageId": VORLAGE, "name": "Demo shelf label"}
        label = self._call("POST", "/labels/from-vorlage", body, expect=201)
        approval = {"version": 1, "status": "approved", "comment": "the demo's sample label"}
        self._call("POST", f"/labels/{label['id']}/status", approval)
        self.state["label_id"] = label["id"]
        self._save()

    def _ensure_flow(self) -> None:
        if self._exists("flow_id", "/flows"):
            return
        variables = {"aisle": "record.aisle", "rack": "int(record.rack)"}
        variables |= {"level": "int(record.level)", "position": "record.position"}
        document = {
            "nodes": [
                {
                    "id": "inbox",
                    "type": "trigger.folder",
                    "path": "inbox",
                    "format": "csv",
                    "wires": ["print"],
                },
                {
                    "id": "print",
                    "type": "action.print",
                    "label": self.state["label_id"],
                    "printer": "demo",
                    "variables": variables,
                },
            ],
            "samples": [{"aisle": "A", "rack": "1", "level": "2", "position": "B"}],
        }
        body = {"name": "Demo inbox", "document": document}
        self.state["flow_id"] = self._call("POST", "/flows", body, expect=201)["id"]
        self.state.pop("deployment_id", None)
        self._save()

    def _ensure_deployment(self) -> None:
        if self._exists("deployment_id", "/deployments"):
            current = self._call("GET", f"/deployments/{self.state['deployment_id']}")
            if current["status"] in ("active", "rolling_out", "awaiting_approval"):
                if current["status"] == "awaiting_approval":
                    self._call("POST", f"/deployments/{current['id']}/approval", {"stage": 0})
                return
        body = {
            "flow_id": self.state["flow_id"],
            "version": 1,
            "stages": [{"group_ids": [self.state["group_id"]]}],
            "printers": {"demo": self.state["printer_id"]},
        }
        deployment = self._call("POST", "/deployments", body, expect=201)
        self.state["deployment_id"] = deployment["id"]
        self._save()
        self._call("POST", f"/deployments/{deployment['id']}/approval", {"stage": 0})

    def _wait_active(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            current = self._call("GET", f"/deployments/{self.state['deployment_id']}")
            if current["status"] == "active":
                return
            self._check_children()
            time.sleep(0.5)
        raise DemoFailed(f"the demo flow did not start; see {self.folder / 'runner.log'}")

    # --- processes ----------------------------------------------------------------------------

    def _spawn(self, log_name: str, *command: str) -> None:
        # The children talk to the service like any Runner: none of its AWS settings.
        env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "ETIKETT_"))}
        env["PYTHONUNBUFFERED"] = "1"
        with (self.folder / log_name).open("ab") as log:
            child = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        self._children.append((Path(command[0]).name, child))

    def _check_children(self) -> None:
        for name, child in self._children:
            if child.poll() is not None:
                raise DemoFailed(f"{name} stopped ({child.returncode}); see {self.folder}")

    def start(self) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        for folder in (self.folder, self.inbox, self.labels):
            folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "sample.csv").write_text(SAMPLE)
        self._load()
        self._sign_in()
        self._start_printer()
        self._start_runner()
        self._ensure_printer()
        self._ensure_label()
        self._ensure_flow()
        self._ensure_deployment()
        self._wait_active()

    def stop(self) -> None:
        for _, child in self._children:
            if child.poll() is None:
                child.send_signal(signal.SIGTERM)
        for _, child in self._children:
            try:
                child.wait(20)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
        self.http.close()

    def banner(self) -> list[str]:
        inbox, labels, folder = (_shown(p) for p in (self.inbox, self.labels, self.folder))
        return [
            f"Demo ready: drop a CSV with the columns {','.join(COLUMNS)} into {inbox}/",
            f"  e.g. cp {folder}/sample.csv {inbox}/",
            f"  labels arrive as PNGs in {labels}/ (the Runner's log: {folder}/runner.log)",
            f"  console: {self.service_url}/console, sign in as {USERNAME} with the password "
            f"{self.state['password']} (kept in {_shown(self.state_path)})",
        ]


def _shown(path: Path) -> str:
    """A path as short as it is clear: relative to the working folder when inside it."""
    relative = os.path.relpath(path)
    return str(path) if relative.startswith("..") else relative
