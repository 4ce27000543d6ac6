"""Keep-alive HTTP for the local moto server.

werkzeug's development server answers every request with `Connection: close` (after which it
drains the socket for 10 ms), so each DynamoDB or SQS call of the local service paid a new TCP
connection, a new server thread and the teardown of both: about a tenth of the local service's
CPU while prints run back to back. botocore keeps its connections for reuse; this handler lets
it. It answers each request with its full length (our moto app answers with one body, read whole
beforehand), keeps the connection open when the client does (HTTP/1.1), and closes it otherwise,
after an idle minute, or when a request body may not have been read to its end. Head and body
go out in one write, and the request line is not formatted for a log that drops it.
"""

from __future__ import annotations

import logging
from typing import Any

from moto.moto_server.werkzeug_app import MotoRequestHandler

logger = logging.getLogger(__name__)
_requests_log = logging.getLogger("werkzeug")  # where werkzeug logs each request, at INFO

IDLE_SECONDS = 60.0  # an idle connection's thread ends after this


class KeepAliveMotoRequestHandler(MotoRequestHandler):
    """moto's request handler (its environ), answering with a length instead of a closed
    connection."""

    protocol_version = "HTTP/1.1"
    timeout = IDLE_SECONDS
    # Without this, the last segment of a long answer could wait for the client's (delayed)
    # acknowledgement of those before it.
    disable_nagle_algorithm = True
    _headers_buffer: list[bytes]  # http.server's head of the answer, made by send_response

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
        # end_headers() would send the head alone: one system call less per answer.
        parts: list[bytes] = getattr(self, "_headers_buffer", [])
        if self.request_version != "HTTP/0.9":
            parts.append(b"\r\n")
        if environ["REQUEST_METHOD"] != "HEAD" and body:
            parts.append(body)
        self._headers_buffer = []
        self.wfile.write(b"".join(parts))

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        # werkzeug formats the line (date, path, colours) before its logger drops it; local AWS
        # sets that logger to WARNING. (Unset, werkzeug's first log sets it to INFO.)
        if _requests_log.level == logging.NOTSET or _requests_log.isEnabledFor(logging.INFO):
            super().log_request(code, size)
