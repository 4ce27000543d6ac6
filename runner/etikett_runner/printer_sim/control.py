"""A small HTTP control endpoint on 127.0.0.1, so a developer can flip conditions by hand.

`GET /status` → JSON of the simulator's state; `POST /condition` with a JSON object such as
`{"paper_out": true}` or `{"slow_seconds": 0.5}` → the state after the change. Loopback only, and
POST wants `Content-Type: application/json`, which a web page cannot send across origins without
a CORS preflight this server never answers: a page in the developer's browser can't flip it.
"""

from __future__ import annotations

import json
import logging
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Protocol

log = logging.getLogger("etikett_runner.printer_sim")

_MAX_BODY = 64 * 1024


class Controllable(Protocol):
    """What the control endpoint drives (the simulator), so this module needs nothing of it."""

    def status(self) -> dict[str, Any]: ...

    def apply_conditions(self, conditions: dict[str, Any]) -> object: ...


class ControlServer:
    def __init__(self, simulator: Controllable, port: int) -> None:
        handler = type("Handler", (_Handler,), {"simulator": simulator})
        self._server = ThreadingHTTPServer(("127.0.0.1", port), handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.1},
            name="printer-sim-control",
            daemon=True,
        )

    def start(self) -> None:
        self._thread.start()
        log.info(
            'control: http://127.0.0.1:%d  (GET /status, POST /condition {"paper_out": true})',
            self.port,
        )

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


class _Handler(BaseHTTPRequestHandler):
    simulator: Controllable
    server_version = "etikett-printer-sim"

    def do_GET(self) -> None:
        if self.path.split("?", 1)[0] == "/status":
            self._reply(HTTPStatus.OK, self.simulator.status())
        else:
            self._reply(HTTPStatus.NOT_FOUND, {"error": "try GET /status or POST /condition"})

    def do_POST(self) -> None:
        if self.path.split("?", 1)[0] != "/condition":
            self._reply(HTTPStatus.NOT_FOUND, {"error": "try GET /status or POST /condition"})
            return
        content_type = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        if content_type != "application/json":
            self._reply(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "send application/json"})
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 < length <= _MAX_BODY:
            self._reply(HTTPStatus.BAD_REQUEST, {"error": "a JSON object body is required"})
            return
        try:
            body = json.loads(self.rfile.read(length))
            if not isinstance(body, dict):
                raise ValueError("the body must be a JSON object")
            self.simulator.apply_conditions(body)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError too
            self._reply(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
            return
        self._reply(HTTPStatus.OK, self.simulator.status())

    def _reply(self, status: HTTPStatus, body: dict[str, Any]) -> None:
        data = json.dumps(body, indent=2).encode("utf-8") + b"\n"
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("control: " + format, *args)
