"""The README's quickstart, run as a newcomer runs it: its shell blocks, in order, exactly as
written (read from README.md, no second copy), in one shell, against a fresh `etikett dev`, with
the real printer simulator, Runner and MCP SDK client it starts."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

from support.server import REPO, DevServer, free_port

README = REPO / "README.md"
# What a newcomer reads before it: at most this many lines of commands (the issue asks ~80).
MAX_COMMAND_LINES = 80


def quickstart_blocks(readme: str) -> list[str]:
    """The ```sh blocks of the README's Quickstart section, in order."""
    section = re.search(r"^## Quickstart\n(.*?)(?=^## )", readme, re.S | re.M)
    assert section, "README.md has no Quickstart section"
    return re.findall(r"^```sh\n(.*?)^```$", section.group(1), re.S | re.M)


def test_the_quickstart_has_its_parts_and_stays_short() -> None:
    blocks = quickstart_blocks(README.read_text())
    script = "\n".join(blocks)
    for step in (
        "/auth/setup",
        "/labels/from-vorlage",
        "/preview",
        "/status",
        "etikett-printer-sim",
        "etikett-runner",
        "/print",
        "trigger.folder",
        "/deployments",
        "streamable_http_client",
        "kill $RUNNER $SIM",
    ):
        assert step in script, f"the quickstart lost its step {step!r}"
    assert "etku_…" not in script and "lbl_…" not in script, "a placeholder to edit by hand"
    assert len(script.splitlines()) <= MAX_COMMAND_LINES


def test_the_quickstart_runs_as_written(server: DevServer, tmp_path: Path) -> None:
    blocks = quickstart_blocks(README.read_text())
    # The repository folder as the newcomer has it: the quickstart calls `../.venv/bin/…` from
    # its own `quickstart/` folder. A folder of our own keeps its files out of the checkout.
    (tmp_path / ".venv").symlink_to(Path(sys.executable).absolute().parents[1])
    printer_port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ETIKETT_", "AWS_"))}
    env.update(PORT=str(server.port), PRINTER_PORT=str(printer_port))
    # -e: a failing command fails the test; -x: the transcript says which one.
    script = "set -euo pipefail -x\n" + "\n".join(blocks)
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("w") as stdout, err.open("w") as stderr:
        # A session of its own: whatever the quickstart left running is ended with it.
        shell = subprocess.Popen(
            ["bash", "-c", script],
            cwd=tmp_path,
            env=env,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            returncode = shell.wait(timeout=180)
        except subprocess.TimeoutExpired:
            returncode = -1
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(shell.pid, signal.SIGKILL)
            shell.wait()
    runner_log = tmp_path / "quickstart" / "runner.log"
    printed = out.read_text()
    transcript = f"{printed}\n--- stderr\n{err.read_text()[-5000:]}\n--- runner.log\n" + (
        runner_log.read_text()[-3000:] if runner_log.exists() else ""
    )
    assert returncode == 0, transcript

    folder = tmp_path / "quickstart"
    assert (folder / "preview.png").read_bytes().startswith(b"\x89PNG")
    # One print and two CSV rows through the deployed flow, at the printer itself.
    labels = sorted(p.name for p in (folder / "labels").glob("label-*.png"))
    assert labels == ["label-000001.png", "label-000002.png", "label-000003.png"], transcript
    # The MCP snippet saw the tools, made a label (a draft: an agent's) and got the image.
    assert re.search(r"^\d+ tools$", printed, re.M), transcript
    assert re.search(r"^lbl_\w+ draft image/png$", printed, re.M), transcript
    # The background processes ended with the last block: the printer's port is free again.
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", printer_port))
    assert "Traceback" not in err.read_text(), transcript
