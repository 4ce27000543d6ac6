"""The simulator's listening socket: accepted on a thread of its own, each connection handed to a
callback; closing it closes the port at once."""

from __future__ import annotations

import contextlib
import selectors
import socket
import threading
from collections.abc import Callable


class Listener:
    """A listening socket with its accept thread; `close()` returns once the port is closed."""

    def __init__(
        self, host: str, port: int, on_accept: Callable[[socket.socket, str], None]
    ) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._sock = socket.create_server((host, port), family=family, backlog=64)
        self._sock.setblocking(False)
        self.port: int = self._sock.getsockname()[1]
        self._on_accept = on_accept
        # A byte on this pair wakes the selector: closing a socket another thread waits on does
        # not reliably wake it (and on Linux the port would stay open until it does).
        self._wake_r, self._wake_w = socket.socketpair()
        self._thread = threading.Thread(target=self._run, name="printer-sim-accept", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def _run(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self._sock, selectors.EVENT_READ)
        selector.register(self._wake_r, selectors.EVENT_READ)
        try:
            while True:
                for key, _ in selector.select():
                    if key.fileobj is self._wake_r:
                        return
                    try:
                        conn, address = self._sock.accept()
                    except OSError:  # the client gave up between select and accept
                        continue
                    conn.setblocking(True)
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self._on_accept(conn, f"{address[0]}:{address[1]}")
        finally:
            selector.close()
            self._sock.close()
            self._wake_r.close()

    def close(self) -> None:
        if self._thread.ident is None:  # never started: nobody else holds the sockets
            for sock in (self._sock, self._wake_r, self._wake_w):
                sock.close()
            return
        with contextlib.suppress(OSError):
            self._wake_w.send(b"x")
        self._thread.join(timeout=5)
        self._wake_w.close()
