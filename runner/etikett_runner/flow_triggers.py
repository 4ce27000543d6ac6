"""The triggers of deployed flows on the Runner: watched folders, `POST /flows/<path>` on the
Runner's local HTTP port (`--listen`) and schedules. Each turns an event into records and hands
them to its flow (`Deployed.run_event`), which runs them and journals the run."""

from __future__ import annotations

import fnmatch
import json
import logging
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import TYPE_CHECKING, Any

from etikett_runner.flow_runs import RUN_ID, EventFile, new_run_id

if TYPE_CHECKING:
    from etikett_runner.flow_host import Deployed

log = logging.getLogger(__name__)

MAX_FILE_BYTES = 50_000_000
MAX_HTTP_BODY = 5_000_000
SUBFOLDERS = ("processing", "done", "failed")


class TriggerUnusable(Exception):
    """The trigger cannot start here; the message says why (reported as the deployment's
    failure on this Runner)."""


# --- folders --------------------------------------------------------------------------------


class FolderWatch:
    """Files that appear in `folder` (matching `pattern`) become records. A file is taken by
    renaming it into `processing/` (so nobody else takes it, and it is never taken twice),
    read once, run, and left there until its run is delivered; then it moves to `done/` or
    `failed/` (with `<name>.reason.txt`). A file counts as arrived once its size and time
    stood still between two looks."""

    def __init__(
        self,
        flow: Deployed,
        node_id: str,
        folder: Path,
        fields: dict[str, Any],
        poll_seconds: float,
    ) -> None:
        self.flow = flow
        self.node_id = node_id
        self.folder = folder
        self.pattern = str(fields.get("pattern") or "*")
        self.format = str(fields.get("format") or "csv")
        self.delimiter = str(fields.get("delimiter") or ",")
        self.poll_seconds = poll_seconds
        self.processing = folder / "processing"
        self._seen: dict[str, tuple[int, int]] = {}

    def check(self) -> None:
        if not self.folder.is_dir():
            raise TriggerUnusable(f"the watched folder {self.folder} does not exist")
        try:
            for name in SUBFOLDERS:
                (self.folder / name).mkdir(exist_ok=True)
        except OSError as error:
            raise TriggerUnusable(
                f"the watched folder {self.folder} is not writable ({error.strerror or error})"
            ) from None
        if not os.access(self.folder, os.R_OK | os.W_OK | os.X_OK):
            raise TriggerUnusable(f"the watched folder {self.folder} is not writable")

    def run(self, stop: threading.Event) -> None:
        # Files taken before a crash whose run was never journaled: nothing of them was sent.
        for claimed in sorted(self.processing.iterdir()):
            if stop.is_set():
                return
            if (
                claimed.is_file()
                and not claimed.name.startswith(".")
                and not self.flow.owns(claimed)
            ):
                run_id, _, name = claimed.name.partition(".")
                if not RUN_ID.fullmatch(run_id) or not name:
                    run_id, name = new_run_id(), claimed.name
                log.info("%s: taken before the restart, never run; running it now", name)
                self._run(claimed, name, run_id)
        while not stop.wait(self.poll_seconds):
            for path in self._arrived():
                if stop.is_set():
                    return
                run_id = new_run_id()
                claimed = self.processing / f"{run_id}.{path.name}"
                try:
                    os.rename(path, claimed)  # atomic: this file is ours now, once
                except OSError:
                    continue  # gone meanwhile, or another reader was faster
                self._run(claimed, path.name, run_id)

    def _arrived(self) -> list[Path]:
        arrived, seen = [], {}
        try:
            entries = list(os.scandir(self.folder))
        except OSError as error:
            log.warning("cannot read %s: %s", self.folder, error)
            return []
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.name.startswith(".") or not fnmatch.fnmatch(entry.name, self.pattern):
                continue
            try:
                if not entry.is_file():
                    continue
                info = entry.stat()
            except OSError:
                continue
            mark = (info.st_size, info.st_mtime_ns)
            seen[entry.name] = mark
            if self._seen.get(entry.name) == mark:
                arrived.append(Path(entry.path))
        self._seen = seen
        return arrived

    def _run(self, claimed: Path, name: str, run_id: str) -> None:
        from etikett.flows.records import SourceInvalid, parse, record_format

        event = EventFile(folder=str(self.folder), name=name, claimed=str(claimed))
        try:
            size = claimed.stat().st_size
            if size > MAX_FILE_BYTES:
                raise SourceInvalid(f"{size} bytes; at most {MAX_FILE_BYTES}")
            records = parse(claimed.read_bytes(), record_format(self.format), self.delimiter)
        except (SourceInvalid, OSError) as error:
            self.flow.run_event(
                self.node_id, [], name, run_id=run_id, file=event, problem=f"{name}: {error}"
            )
            return
        self.flow.run_event(self.node_id, records, name, run_id=run_id, file=event)


# --- schedules ------------------------------------------------------------------------------


def schedule(flow: Deployed, node_id: str, every: float) -> Callable[[threading.Event], None]:
    """One empty record per tick."""

    def ticks(stop: threading.Event) -> None:
        while not stop.wait(every):
            flow.run_event(node_id, [{}], "schedule")

    return ticks


# --- HTTP -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Route:
    flow: Deployed
    node_id: str


class HttpTriggers:
    """The Runner's local HTTP port: `POST /flows/<path>` with a JSON object or an array of
    objects; 202 `{"run_id"}` once the run is journaled."""

    def __init__(self, host: str, port: int) -> None:
        self._routes: dict[str, Route] = {}
        self._lock = threading.Lock()
        triggers = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "etikett-runner"

            def log_message(self, format: str, *args: Any) -> None:
                log.debug("http trigger: " + format, *args)

            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                self._answer(405, {"detail": "POST a JSON object or an array of objects"})

            def do_POST(self) -> None:
                path = self.path.split("?", 1)[0]
                route = triggers.route(path.removeprefix("/flows/").strip("/"))
                if not path.startswith("/flows/") or route is None:
                    self._answer(404, {"detail": "no deployed flow listens on this path"})
                    return
                try:
                    length = int(self.headers.get("content-length") or 0)
                except ValueError:
                    length = -1
                if not 0 <= length <= MAX_HTTP_BODY:
                    self._answer(413, {"detail": f"send 1 to {MAX_HTTP_BODY} bytes"})
                    return
                try:
                    value = json.loads(self.rfile.read(length) or b"null")
                except ValueError:
                    self._answer(400, {"detail": "the body is not JSON"})
                    return
                records = value if isinstance(value, list) else [value]
                if not records or not all(isinstance(r, dict) for r in records):
                    self._answer(422, {"detail": "send a JSON object or an array of objects"})
                    return
                try:
                    run_id = route.flow.run_event(route.node_id, records, f"POST {path}")
                except Exception:
                    log.exception("http trigger %s", path)
                    self._answer(500, {"detail": "the run could not be recorded"})
                    return
                self._answer(202, {"run_id": run_id})

        self.server = ThreadingHTTPServer((host, port), Handler)
        self.server.daemon_threads = True
        # The address bound (the port given may be 0: any free one)
        self.address = (str(self.server.socket.getsockname()[0]), self.server.server_port)
        self._thread: threading.Thread | None = None

    def route(self, path: str) -> Route | None:
        with self._lock:
            return self._routes.get(path)

    def add(self, path: str, flow: Deployed, node_id: str) -> None:
        with self._lock:
            taken = self._routes.get(path)
            if taken is not None and taken.flow is not flow:
                raise TriggerUnusable(
                    f"POST /flows/{path} is taken by flow {taken.flow.flow_id} on this Runner"
                )
            self._routes[path] = Route(flow, node_id)

    def remove(self, flow: Deployed) -> None:
        with self._lock:
            for path in [p for p, r in self._routes.items() if r.flow is flow]:
                del self._routes[path]

    def start(self) -> None:
        self._thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.2}, name="http triggers"
        )
        self._thread.daemon = True
        self._thread.start()
        log.info("HTTP triggers on http://%s:%d/flows/…", *self.address)

    def close(self) -> None:
        if self._thread is not None:
            self.server.shutdown()
        self.server.server_close()
