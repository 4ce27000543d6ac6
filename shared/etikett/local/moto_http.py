"""Keep-alive HTTP for the local moto server.

werkzeug's development server answers every request with `Connection: close` (after which it
drains the socket for 10 ms), so each DynamoDB or SQS call of the local service paid a new TCP
connection, a new server thread and the teardown of both: about a tenth of the local service's
CPU while prints run back to back. botocore keeps its connections for reuse; this handler lets
it. It answers each request with its full length (our moto app answers with one body, read whole
beforehand), keeps the connection open when the client does (HTTP/1.1), and closes it otherwise,
after an idle minute, or when a request body may not have been read to its end.
"""

from __future__ import annotations

import logging
from typing import Any

from moto.moto_server.werkzeug_app import MotoRequestHandler

logger = logging.getLogger(__name__)

IDLE_SECONDS = 60.0  # an idle connection's thread ends after this


class KeepAliveMotoRequestHandler(MotoRequestHandler):
    """moto's request handler (its environ), answering with a length instead of a closed
    connection."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_SECONDS
    # Head and body go out as two writes: without this, the body would wait for the client's
    # (delayed) acknowledgement of the head.
    disable_nagle_algorithm = True

    def run_wsgi(self) -> None:
        if self.headers.get("Expect", "").lower().strip(" \t") == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        environ = self.make_environ()
        if "CONTENT_LENGTH" not in environ and environ.get("HTTP_TRANSFER_ENCODING"):
            # A body of no declared length: only a closed connection says where it ends.
            self.close_connection = True
        started: list[Any] = []

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Any:
            started[:] = [status, headers]
            return lambda data: None  # the app returns its body; it never writes

        try:
            result = self.server.app(environ, start_response)
            try:
                body = b"".join(result)
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
        except Exception:
            self.close_connection = True
            logger.exception("moto request failed")
            started[:] = ["500 Internal Server Error", [("Content-Type", "text/plain")]]
            body = b"Internal Server Error"
        status, headers = started
        code, _, reason = status.partition(" ")
        self.send_response(int(code), reason)
        has_length = False
        for name, value in headers:
            if name.lower() == "connection":
                continue  # this handler decides
            has_length = has_length or name.lower() == "content-length"
            self.send_header(name, value)
        if not has_length:
            self.send_header("Content-Length", str(len(body)))
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if environ["REQUEST_METHOD"] != "HEAD" and body:
            self.wfile.write(body)
