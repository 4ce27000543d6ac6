"""The Runner's local HTTP port for deployed flows' `trigger.http` (`--listen`): `POST
/flows/<path>` with a JSON object or an array of objects answers 202 `{"run_id"}` once the run
is journaled.

The port is for machines on the site (an ERP, a scanner station), never for browsers, so that
no web page a person opens can start a flow: a request that carries `Origin`, or
`Sec-Fetch-Site: cross-site`/`same-site`, is refused (403), as is any `Host` but the address
the request arrived at or a name the site allowed (`--listen-host-name`; 421: DNS rebinding),
any body but `application/json` (415: no HTML form can send it without a CORS preflight, which
is never answered). A trigger may name a `secret` credential: then the request must carry it
(`Authorization: Bearer …` or `X-Etikett-Trigger-Secret`, compared in constant time; 401).
Bodies are bounded (413), each client address has a request budget (429 with `Retry-After`),
and few requests run at once (503), each with a socket timeout. Refusals are RFC 9457 problems
with a `code`."""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from etikett_runner.flow_triggers import TriggerUnusable

if TYPE_CHECKING:
    from etikett_runner.deployed_flow import Deployed

log = logging.getLogger(__name__)

MAX_HTTP_BODY = 5_000_000
SECRET_HEADER = "x-etikett-trigger-secret"
MAX_CLIENTS = 1024  # request budgets kept (least recently seen forgotten first)


@dataclass(frozen=True)
class HttpLimits:
    rate: float = 20.0  # requests per second and client address …
    burst: int = 60  # … with this many at once
    concurrent: int = 16  # requests being handled at once (all clients)
    socket_seconds: float = 10.0  # a client that sends nothing this long is dropped


@dataclass(frozen=True)
class Route:
    flow: Deployed
    node_id: str
    secret: str | None  # the ref of the `secret` credential a request must carry


class Budgets:
    """A token bucket per client address: `rate` a second, at most `burst` saved up."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = max(rate, 0.001)
        self.burst = max(burst, 1)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def take(self, client: str, now: float | None = None) -> float:
        """0 if the client may go on (one request spent), else the seconds until it may."""
        now = time.monotonic() if now is None else now
        with self._lock:
            tokens, since = self._buckets.pop(client, (float(self.burst), now))
            tokens = min(float(self.burst), tokens + (now - since) * self.rate)
            wait = 0.0 if tokens >= 1.0 else (1.0 - tokens) / self.rate
            self._buckets[client] = (tokens - 1.0 if wait == 0.0 else tokens, now)
            while len(self._buckets) > MAX_CLIENTS:
                self._buckets.popitem(last=False)
            return wait


def _host_and_port(value: str) -> tuple[str, int | None] | None:
    """`Host`'s name (lower case, no trailing dot) and port; None if malformed."""
    text = value.strip()
    if text.startswith("["):
        name, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return None
        port_text = rest[1:] if rest else ""
    else:
        name, _, port_text = text.partition(":")
        if ":" in port_text:
            return None
    if not name:
        return None
    if port_text and not (port_text.isdigit() and len(port_text) <= 5):
        return None
    return name.lower().rstrip("."), int(port_text) if port_text else None


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        parsed = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(parsed, ipaddress.IPv6Address) and parsed.ipv4_mapped is not None:
        return parsed.ipv4_mapped
    return parsed


def host_refusal(host: str | None, local_address: str, port: int, names: frozenset[str]) -> str:
    """Why a request's `Host` is refused ("" if it is fine): it must name the address the
    request arrived at (or `localhost` on loopback), or a name the site allowed, and the port."""
    parsed = _host_and_port(host or "")
    if parsed is None:
        return "the request has no valid Host header"
    name, given_port = parsed
    if (given_port or 80) != port:
        return f"Host names port {given_port or 80}, but this port is {port}"
    if name in names:
        return ""
    arrived = _address(local_address)
    named = _address(name)
    if named is not None and named == arrived:
        return ""
    if name == "localhost" and arrived is not None and arrived.is_loopback:
        return ""
    return (
        f"Host {name!r} is neither the address this request arrived at nor a name this Runner "
        "was told to answer to (--listen-host-name)"
    )


class HttpTriggers:
    """The Runner's local HTTP port; routes are added and removed as flows start and stop."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        host_names: Iterable[str] = (),
        limits: HttpLimits | None = None,
    ) -> None:
        self._routes: dict[str, Route] = {}
        self._lock = threading.Lock()
        self.limits = limits or HttpLimits()
        self.host_names = frozenset(n.strip().lower().rstrip(".") for n in host_names if n.strip())
        self.budgets = Budgets(self.limits.rate, self.limits.burst)
        self._running = threading.BoundedSemaphore(max(1, self.limits.concurrent))
        self.server = ThreadingHTTPServer((host, port), _handler(self))
        self.server.daemon_threads = True
        # The address bound (the port given may be 0: any free one)
        self.address = (str(self.server.socket.getsockname()[0]), self.server.server_port)
        self._thread: threading.Thread | None = None

    def route(self, path: str) -> Route | None:
        with self._lock:
            return self._routes.get(path)

    def add(self, path: str, flow: Deployed, node_id: str, secret: str | None = None) -> None:
        with self._lock:
            taken = self._routes.get(path)
            if taken is not None and taken.flow is not flow:
                raise TriggerUnusable(
                    f"POST /flows/{path} is taken by flow {taken.flow.flow_id} on this Runner"
                )
            self._routes[path] = Route(flow, node_id, secret)

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


class Refusal(Exception):
    def __init__(
        self, status: int, code: str, detail: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = headers or {}


def _handler(triggers: HttpTriggers) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "etikett-runner"
        protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers
        timeout = triggers.limits.socket_seconds

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("http trigger: " + format, *args)

        def _answer(
            self, status: int, body: dict[str, Any], headers: dict[str, str] | None = None
        ) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            problem = status >= 400
            self.send_header(
                "content-type", "application/problem+json" if problem else "application/json"
            )
            self.send_header("content-length", str(len(data)))
            self.send_header("cache-control", "no-store")
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

        def _refuse(self, refusal: Refusal) -> None:
            title = self.responses.get(refusal.status, ("Refused",))[0]
            body = {
                "type": "about:blank",
                "title": title,
                "status": refusal.status,
                "code": refusal.code,
                "detail": refusal.detail,
            }
            self._answer(refusal.status, body, refusal.headers)

        def _guard(self) -> None:
            """What every request must pass before anything else is looked at."""
            local_address = str(self.connection.getsockname()[0])
            if len(self.headers.get_all("host") or []) > 1:
                raise Refusal(421, "trigger.host_refused", "the request has two Host headers")
            why = host_refusal(
                self.headers.get("host"), local_address, triggers.address[1], triggers.host_names
            )
            if why:
                raise Refusal(421, "trigger.host_refused", why)
            if self.headers.get("origin") is not None:
                raise Refusal(
                    403,
                    "trigger.cross_site",
                    "a request from a web page (it carries Origin) never starts a flow",
                )
            if (self.headers.get("sec-fetch-site") or "").strip().lower() in (
                "cross-site",
                "same-site",
            ):
                raise Refusal(
                    403, "trigger.cross_site", "a request from another site never starts a flow"
                )
            wait = triggers.budgets.take(str(self.client_address[0]))
            if wait > 0:
                raise Refusal(
                    429,
                    "trigger.rate_limited",
                    f"too many requests from {self.client_address[0]}; at most "
                    f"{triggers.limits.rate:g} a second",
                    {"retry-after": str(max(1, math.ceil(wait)))},
                )

        def _serve(self) -> None:
            try:
                self._guard()
            except Refusal as refusal:
                self._refuse(refusal)
                return
            if not triggers._running.acquire(blocking=False):
                self._refuse(
                    Refusal(
                        503,
                        "trigger.busy",
                        "this Runner is handling as many requests as it takes at once",
                        {"retry-after": "1"},
                    )
                )
                return
            try:
                if self.command != "POST":
                    raise Refusal(
                        405,
                        "trigger.method_not_allowed",
                        "POST a JSON object or an array of objects",
                        {"allow": "POST"},
                    )
                self._answer(202, {"run_id": self._post()})
            except Refusal as refusal:
                self._refuse(refusal)
            finally:
                triggers._running.release()

        do_POST = do_GET = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = _serve

        def _post(self) -> str:
            path = self.path.split("?", 1)[0]
            route = triggers.route(path.removeprefix("/flows/").strip("/"))
            if not path.startswith("/flows/") or route is None:
                raise Refusal(404, "trigger.not_found", "no deployed flow listens on this path")
            if self.headers.get_content_type() != "application/json":
                raise Refusal(415, "trigger.media_type", "send Content-Type: application/json")
            if self.headers.get("transfer-encoding") or self.headers.get("content-length") is None:
                raise Refusal(411, "trigger.length_required", "send Content-Length")
            try:
                length = int(self.headers["content-length"])
            except ValueError:
                length = -1
            if not 0 < length <= MAX_HTTP_BODY:
                raise Refusal(413, "trigger.too_large", f"send 1 to {MAX_HTTP_BODY} bytes")
            self._check_secret(route)
            try:
                body = self.rfile.read(length)
            except OSError:  # the socket timed out: a client too slow (or stalling on purpose)
                raise Refusal(400, "trigger.body_incomplete", "the body did not arrive") from None
            try:
                value = json.loads(body)
            except (ValueError, RecursionError):  # RecursionError: nested beyond any reason
                raise Refusal(400, "trigger.not_json", "the body is not JSON") from None
            records = value if isinstance(value, list) else [value]
            if not records or not all(isinstance(r, dict) for r in records):
                raise Refusal(
                    422, "trigger.not_records", "send a JSON object or an array of objects"
                )
            try:
                return route.flow.run_event(route.node_id, records, f"POST {path}")
            except Exception:
                log.exception("http trigger %s", path)
                raise Refusal(
                    500, "trigger.not_recorded", "the run could not be recorded"
                ) from None

        def _check_secret(self, route: Route) -> None:
            if route.secret is None:
                return
            # Read at every request: a secret replaced on the service arrives with the flows.
            expected = (route.flow.spec.get("credentials") or {}).get(route.secret)
            if not isinstance(expected, str) or not expected:
                raise Refusal(
                    503,
                    "trigger.secret_unavailable",
                    f"the trigger's secret {route.secret!r} has not reached this Runner",
                )
            given = self.headers.get(SECRET_HEADER)
            scheme, _, token = (self.headers.get("authorization") or "").partition(" ")
            if given is None and scheme.lower() == "bearer":
                given = token.strip()
            if given is None or not hmac.compare_digest(given.encode(), expected.encode()):
                raise Refusal(
                    401,
                    "trigger.secret_required",
                    "this trigger needs its secret: Authorization: Bearer <secret> or "
                    f"{SECRET_HEADER}",
                    {"www-authenticate": 'Bearer realm="etikett-runner"'},
                )

    return Handler
