"""The local HTTP API: routes each request by the template's HttpApi events to that function's
handler with an API Gateway v2 (payload format 2.0) event, as API Gateway does on AWS."""

from __future__ import annotations

import base64
import json
import logging
import re
import time
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

from anyio import to_thread

from etikett.local.functions import FunctionRegistry
from etikett.local.template import LOCAL_ACCOUNT, HttpRoute
from etikett.local.tls import CLIENT_CERT_SCOPE_KEY, client_cert_context

logger = logging.getLogger("etikett.gateway")

MAX_BODY_BYTES = 10 * 1024 * 1024  # API Gateway's payload limit
_TEXT_TYPES = (
    "text/",
    "application/json",
    "application/problem+json",
    "application/xml",
    "application/x-www-form-urlencoded",
    "application/javascript",
)


@dataclass(frozen=True)
class _CompiledRoute:
    route: HttpRoute
    pattern: re.Pattern[str]
    params: tuple[str, ...]
    static_segments: int
    greedy: bool


def _compile(route: HttpRoute) -> _CompiledRoute:
    parts, params, static, greedy = [], [], 0, False
    for segment in route.path.strip("/").split("/"):
        match = re.fullmatch(r"\{([^}+]+)(\+?)\}", segment)
        if match:
            params.append(match.group(1))
            greedy = greedy or bool(match.group(2))
            parts.append("(.+)" if match.group(2) else "([^/]+)")
        else:
            static += 1
            parts.append(re.escape(segment))
    return _CompiledRoute(route, re.compile("/" + "/".join(parts)), tuple(params), static, greedy)


class Router:
    """API Gateway's route selection: the most specific matching route wins, then `$default`."""

    def __init__(self, routes: list[HttpRoute]) -> None:
        compiled = [_compile(r) for r in routes if r.path != "$default"]
        # More static segments first; a greedy path variable last; an exact method before ANY.
        self._routes = sorted(
            compiled, key=lambda c: (-c.static_segments, c.greedy, c.route.method == "ANY")
        )
        self._default = next((r for r in routes if r.path == "$default"), None)

    def match(self, method: str, path: str) -> tuple[HttpRoute, dict[str, str]] | None:
        for candidate in self._routes:
            if candidate.route.method not in (method, "ANY"):
                continue
            found = candidate.pattern.fullmatch(path)
            if found:
                return candidate.route, dict(zip(candidate.params, found.groups(), strict=True))
        if self._default is not None:
            return self._default, {}
        return None


def _is_text(content_type: str) -> bool:
    return content_type.split(";")[0].strip().lower().startswith(_TEXT_TYPES)


def build_event(
    scope: dict[str, Any], body: bytes, route: HttpRoute, path_params: dict[str, str]
) -> dict[str, Any]:
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for raw_name, raw_value in scope["headers"]:
        name, value = raw_name.decode("latin-1").lower(), raw_value.decode("latin-1")
        if name == "cookie":
            cookies.extend(part.strip() for part in value.split(";") if part.strip())
            continue
        headers[name] = f"{headers[name]},{value}" if name in headers else value
    # As API Gateway does: the functions learn the client's scheme, port and address.
    client = scope.get("client") or ("127.0.0.1", 0)
    server = scope.get("server") or ("127.0.0.1", 80)
    headers["x-forwarded-proto"] = scope.get("scheme", "http")
    headers["x-forwarded-port"] = str(server[1])
    headers["x-forwarded-for"] = client[0]
    raw_query = scope.get("query_string", b"").decode("latin-1")
    query: dict[str, str] = {}
    for key, value in parse_qsl(raw_query, keep_blank_values=True):
        query[key] = f"{query[key]},{value}" if key in query else value
    method = scope["method"]
    route_key = "$default" if route.path == "$default" else f"{route.method} {route.path}"
    now = time.time()
    content_type = headers.get("content-type", "")
    is_text = not body or _is_text(content_type)
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": scope["path"],
        "rawQueryString": raw_query,
        "headers": headers,
        "requestContext": {
            "accountId": LOCAL_ACCOUNT,
            "apiId": "local",
            "domainName": headers.get("host", "127.0.0.1"),
            "domainPrefix": "local",
            "http": {
                "method": method,
                "path": scope["path"],
                "protocol": f"HTTP/{scope.get('http_version', '1.1')}",
                "sourceIp": client[0],
                "userAgent": headers.get("user-agent", ""),
            },
            "requestId": uuid.uuid4().hex,
            "routeKey": route_key,
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": not is_text,
    }
    der = scope.get(CLIENT_CERT_SCOPE_KEY)
    if der:
        event["requestContext"]["authentication"] = {"clientCert": client_cert_context(der)}
    if cookies:
        event["cookies"] = cookies
    if query:
        event["queryStringParameters"] = query
    if path_params:
        event["pathParameters"] = path_params
    if body:
        event["body"] = (
            body.decode("utf-8", "replace") if is_text else base64.b64encode(body).decode()
        )
    return event


def _gateway_error(status: int, message: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    return (
        status,
        [(b"content-type", b"application/json")],
        json.dumps({"message": message}).encode(),
    )


def decode_response(result: Any) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """A v2 handler answer to status, headers, body, as API Gateway turns it into HTTP."""
    if not isinstance(result, dict) or "statusCode" not in result:
        body = json.dumps(result).encode()
        return 200, [(b"content-type", b"application/json")], body
    headers = [
        (k.lower().encode("latin-1"), str(v).encode("latin-1"))
        for k, v in (result.get("headers") or {}).items()
    ]
    for name, values in (result.get("multiValueHeaders") or {}).items():
        headers.extend((name.lower().encode("latin-1"), str(v).encode("latin-1")) for v in values)
    headers.extend((b"set-cookie", c.encode("latin-1")) for c in result.get("cookies") or [])
    raw = result.get("body") or ""
    body = base64.b64decode(raw) if result.get("isBase64Encoded") else raw.encode()
    return int(result["statusCode"]), headers, body


class Gateway:
    """An ASGI app standing in for the HttpApi."""

    def __init__(self, router: Router, functions: FunctionRegistry) -> None:
        self.router = router
        self.functions = functions

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        status, headers, body = await self._answer(scope, receive)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def _answer(
        self, scope: dict[str, Any], receive: Any
    ) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
        chunks, size = [], 0
        while True:
            message = await receive()
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                return _gateway_error(413, "Request Entity Too Large")
            chunks.append(chunk)
            if not message.get("more_body"):
                break
        matched = self.router.match(scope["method"], scope["path"])
        if matched is None:
            return _gateway_error(404, "Not Found")
        route, path_params = matched
        event = build_event(scope, b"".join(chunks), route, path_params)
        try:
            result = await to_thread.run_sync(self.functions.invoke, route.function, event)
        except Exception:
            logger.exception("function %s failed", route.function)
            return _gateway_error(500, "Internal Server Error")
        return decode_response(result)
