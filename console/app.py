"""Lambda entry of the browser console: serves `static/` from the API's own origin, so the session
cookie works and the page talks to no other host.

`/console` and every path below it but `/console/assets/…` answer the page (the console routes in
the browser), never cached without asking again. The assets live under `/console/assets/<hash>/`,
where the hash covers every file: a release changes the hash, so assets can be cached for good
(`immutable`) and relative module imports still resolve. Standard library only: nothing to import
at a cold start but this file.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import mimetypes
from pathlib import Path
from typing import Any

STATIC = Path(__file__).with_name("static")
BASE = "/console"
ASSETS = f"{BASE}/assets/"
PAGE_FILE = "index.html"
# Vendored libraries (console/vendor.json) are classic scripts loaded on first use, not preloaded.
VENDOR = "vendor/"
IMMUTABLE = "public, max-age=31536000, immutable"
# The page may load and call only its own origin; blob: and data: are the previews it draws.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
}
_TYPES = {
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
    ".html": "text/html; charset=utf-8",
    ".json": "application/json",
    ".png": "image/png",
    ".woff2": "font/woff2",
}
_COMPRESSIBLE = (".js", ".css", ".svg", ".html", ".json")


class Console:
    """The files, read once (a warm container keeps them), and the page that names their hash."""

    def __init__(self, root: Path) -> None:
        files = {
            path.relative_to(root).as_posix(): path.read_bytes()
            for path in sorted(root.rglob("*"))
            if path.is_file() and not path.name.startswith(".")
        }
        digest = hashlib.sha256()
        for name, data in files.items():
            digest.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
        self.version = digest.hexdigest()[:16]
        self.asset_base = f"{ASSETS}{self.version}"
        template = files.pop(PAGE_FILE).decode()
        modules = "\n".join(
            f'<link rel="modulepreload" href="{self.asset_base}/{name}">'
            for name in files
            if name.endswith(".js") and not name.startswith(VENDOR)
        )
        page = template.replace("{{assets}}", self.asset_base).replace("{{modules}}", modules)
        self.page = page.encode()
        self.files = files
        self._compressed: dict[str, bytes] = {}

    def compressed(self, name: str, data: bytes) -> bytes:
        if name not in self._compressed:
            self._compressed[name] = gzip.compress(data, compresslevel=9, mtime=0)
        return self._compressed[name]

    def answer(self, method: str, path: str, headers: dict[str, str]) -> dict[str, Any]:
        if method not in ("GET", "HEAD"):
            return _plain(405, "Method not allowed", {"allow": "GET, HEAD"})
        if path in ("/", f"{BASE}/"):
            return _plain(302, "", {"location": BASE, "cache-control": "no-cache"})
        if path.startswith(ASSETS):
            version, _, name = path[len(ASSETS) :].partition("/")
            data = self.files.get(name)
            if data is None:
                return _plain(404, "No such asset", {"cache-control": "no-cache"})
            # An asset of an older release: today's file, which must not be kept as that one.
            cache = IMMUTABLE if version == self.version else "no-cache"
            return self._file(name, data, cache, headers)
        if path == BASE or path.startswith(f"{BASE}/"):
            etag = f'"{self.version}"'
            extra = {"etag": etag, "content-security-policy": CONTENT_SECURITY_POLICY}
            if headers.get("if-none-match") == etag:
                return {"statusCode": 304, "headers": {"cache-control": "no-cache", **extra}}
            return self._file(PAGE_FILE, self.page, "no-cache", headers, extra)
        return _plain(404, "Not found", {})

    def _file(
        self,
        name: str,
        data: bytes,
        cache: str,
        headers: dict[str, str],
        extra: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        suffix = Path(name).suffix
        answer_headers = {
            "content-type": _TYPES.get(suffix)
            or mimetypes.guess_type(name)[0]
            or "application/octet-stream",
            "cache-control": cache,
            "vary": "accept-encoding",
            **SECURITY_HEADERS,
            **(extra or {}),
        }
        if suffix in _COMPRESSIBLE and "gzip" in headers.get("accept-encoding", ""):
            data = self.compressed(name, data)
            answer_headers["content-encoding"] = "gzip"
        return {
            "statusCode": 200,
            "headers": answer_headers,
            "body": base64.b64encode(data).decode(),
            "isBase64Encoded": True,
        }


def _plain(status: int, text: str, headers: dict[str, str]) -> dict[str, Any]:
    return {
        "statusCode": status,
        "headers": {"content-type": "text/plain; charset=utf-8", **SECURITY_HEADERS, **headers},
        "body": text,
        "isBase64Encoded": False,
    }


CONSOLE = Console(STATIC)


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """API Gateway HTTP API (payload 2.0) event in, answer out."""
    http = (event.get("requestContext") or {}).get("http") or {}
    method = str(http.get("method") or "GET").upper()
    path = str(event.get("rawPath") or http.get("path") or "/")
    headers = {str(k).lower(): str(v) for k, v in (event.get("headers") or {}).items()}
    answer = CONSOLE.answer(method, path, headers)
    if method == "HEAD":
        answer = {**answer, "body": "", "isBase64Encoded": False}
    return answer
