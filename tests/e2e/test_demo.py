"""`etikett dev --demo` (what `make demo` runs): a CSV dropped into demo/inbox comes out as label
PNGs; Ctrl-C stops the service, the Runner and the simulator; a second start reuses what the
first one made instead of making it again."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from e2e.runners import eventually
from support.server import REPO, free_port


class Demo:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.port, self.agent_port, self.broker_port = free_port(), free_port(), free_port()
        self.log = root / "demo-dev.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ETIKETT_", "AWS_"))}
        command = [sys.executable, "-m", "etikett.local.cli", "dev", "--demo"]
        command += ["--port", str(self.port), "--agent-port", str(self.agent_port)]
        command += ["--broker-port", str(self.broker_port)]
        command += ["--home", str(self.root / "home"), "--demo-dir", str(self.root / "demo")]
        command += ["--template", str(REPO / "template.yaml")]
        offset = self.log.stat().st_size if self.log.exists() else 0
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                command, cwd=self.root, env={**env, "PYTHONUNBUFFERED": "1"}, stdout=log,
                stderr=subprocess.STDOUT,
            )  # fmt: skip

        def ready() -> str:
            assert self.process is not None and self.process.poll() is None, self.output()
            text = self.output()[offset:]
            return text if "Press Ctrl-C to stop." in text else ""

        return eventually(ready, timeout=180, every=0.5)

    def stop(self) -> int:
        """Ctrl-C, as a person stops it."""
        assert self.process is not None
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(60)

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def api(self) -> httpx.Client:
        state = json.loads((self.root / "home" / "demo.json").read_text())
        login = httpx.post(
            f"http://127.0.0.1:{self.port}/api/v1/auth/login",
            json={"username": "demo", "password": state["password"]},
        )
        token = login.json()["token"]
        return httpx.Client(
            base_url=f"http://127.0.0.1:{self.port}/api/v1",
            headers={"authorization": f"Bearer {token}"},
            timeout=30,
        )


def _ids(api: httpx.Client, path: str) -> list[str]:
    return [item["id"] for item in api.get(path, params={"limit": 200}).json()["items"]]


def _port_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def test_a_csv_in_the_inbox_comes_out_as_labels_and_a_restart_reuses_the_site(
    tmp_path: Path,
) -> None:
    demo = Demo(tmp_path)
    banner = demo.start()
    try:
        assert "Demo ready" in banner, banner
        inbox, labels = tmp_path / "demo" / "inbox", tmp_path / "demo" / "labels"
        # As a newcomer does it: the sample beside the inbox, copied in.
        (inbox / "rows.csv").write_text((tmp_path / "demo" / "sample.csv").read_text())
        # Within a minute, as the README promises: one label per row.
        eventually(lambda: len(list(labels.glob("label-*.png"))) == 3 or None, timeout=60)
        # The service's log tells the story in its own lines: the job, its outcome, the run.
        # (the job's confirmation may come after the run's report: the printer is asked after)
        events = (
            r"job job_\w+ \(print\) claimed by Runner run_\w+",
            r"job job_\w+ confirmed",
            r"flow run frn_\w+ of flw_\w+: succeeded, 3 record\(s\)",
        )

        def told() -> str | None:
            output = demo.output()
            return output if all(re.search(event, output) for event in events) else None

        try:
            eventually(told, timeout=30)
        except AssertionError:
            missing = [event for event in events if not re.search(event, demo.output())]
            raise AssertionError(f"{missing} not in the log: {demo.output()[-3000:]}") from None
        with demo.api() as api:
            made = {
                path: _ids(api, path) for path in ("/labels", "/flows", "/printers", "/runners")
            }
            made["/deployments"] = _ids(api, "/deployments")
        printer_port = json.loads((tmp_path / "home" / "demo.json").read_text())["printer_port"]
    finally:
        assert demo.stop() == 0, demo.output()[-4000:]
    # Ctrl-C ended the simulator (its port is free) and the Runner with the service.
    assert _port_free(printer_port)
    assert "Stopped." in demo.output()

    second = demo.start()
    try:
        assert "Demo ready" in second, second
        with demo.api() as api:
            again = {path: _ids(api, path) for path in made}
        assert again == made, "a second start made the demo site again"
        assert all(len(ids) == 1 for ids in made.values()), made
        # The site still works after the restart: one more row, one more label.
        (inbox / ".more.part").write_text("aisle,rack,level,position\nZ,9,9,Z\n")
        (inbox / ".more.part").rename(inbox / "more.csv")
        eventually(lambda: len(list(labels.glob("label-*.png"))) == 4 or None, timeout=60)
    finally:
        assert demo.stop() == 0, demo.output()[-4000:]
