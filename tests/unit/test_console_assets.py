"""The console function: the page is never cached without asking, assets under their content hash
are cached for good, nothing names another host, and the answers are Lambda's v2 shape."""

from __future__ import annotations

import base64
import gzip
import importlib.util
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
STATIC = REPO / "console" / "static"


@pytest.fixture(scope="module")
def console() -> ModuleType:
    spec = importlib.util.spec_from_file_location("console_app", REPO / "console" / "app.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _get(console: ModuleType, path: str, **headers: str) -> dict[str, Any]:
    event = {
        "version": "2.0",
        "rawPath": path,
        "headers": headers,
        "requestContext": {"http": {"method": "GET", "path": path}},
    }
    return dict(console.handler(event, None))


def _body(answer: dict[str, Any]) -> bytes:
    raw = answer.get("body") or ""
    data = base64.b64decode(raw) if answer.get("isBase64Encoded") else raw.encode()
    if answer["headers"].get("content-encoding") == "gzip":
        data = gzip.decompress(data)
    return data


def test_the_root_and_a_trailing_slash_lead_to_the_console(console: ModuleType) -> None:
    for path in ("/", "/console/"):
        answer = _get(console, path)
        assert answer["statusCode"] == 302
        assert answer["headers"]["location"] == "/console"


@pytest.mark.parametrize("path", ["/console", "/console/labels", "/console/labels/lbl_X/print"])
def test_every_console_path_answers_the_page_uncached(console: ModuleType, path: str) -> None:
    answer = _get(console, path)
    assert answer["statusCode"] == 200
    headers = answer["headers"]
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["cache-control"] == "no-cache"
    assert "default-src 'none'" in headers["content-security-policy"]
    assert "connect-src 'self'" in headers["content-security-policy"]
    assert headers["x-frame-options"] == "DENY"
    page = _body(answer).decode()
    assert f"/console/assets/{console.CONSOLE.version}/app.js" in page
    assert "{{" not in page


def test_the_page_revalidates_by_its_etag(console: ModuleType) -> None:
    etag = _get(console, "/console")["headers"]["etag"]
    assert _get(console, "/console/flows", **{"if-none-match": etag})["statusCode"] == 304


def test_assets_of_this_release_are_immutable_and_compressed(console: ModuleType) -> None:
    version = console.CONSOLE.version
    answer = _get(console, f"/console/assets/{version}/lib/api.js", **{"accept-encoding": "gzip"})
    assert answer["statusCode"] == 200
    assert answer["headers"]["cache-control"] == "public, max-age=31536000, immutable"
    assert answer["headers"]["content-type"] == "text/javascript; charset=utf-8"
    assert answer["headers"]["content-encoding"] == "gzip"
    assert _body(answer) == (STATIC / "lib" / "api.js").read_bytes()
    plain = _get(console, f"/console/assets/{version}/style.css")
    assert "content-encoding" not in plain["headers"]
    assert _body(plain) == (STATIC / "style.css").read_bytes()


def test_an_asset_of_another_release_is_not_kept(console: ModuleType) -> None:
    answer = _get(console, "/console/assets/0123456789abcdef/app.js")
    assert answer["statusCode"] == 200
    assert answer["headers"]["cache-control"] == "no-cache"


@pytest.mark.parametrize(
    "path",
    [
        "/console/assets/x/nope.js",
        "/console/assets/x/../app.py",
        "/console/assets/x/index.html",
        "/console/assets/x",
        "/elsewhere",
    ],
)
def test_unknown_files_are_404(console: ModuleType, path: str) -> None:
    assert _get(console, path)["statusCode"] == 404


def test_the_version_hash_covers_every_file(console: ModuleType, tmp_path: Path) -> None:
    site = tmp_path / "static"
    site.mkdir()
    (site / "index.html").write_text("<script src='{{assets}}/a.js'></script>{{modules}}")
    (site / "a.js").write_text("1")
    first = console.Console(site)
    (site / "a.js").write_text("2")
    second = console.Console(site)
    assert first.version != second.version
    assert b'<link rel="modulepreload"' in second.page


def test_nothing_ships_that_loads_from_another_host() -> None:
    # An XML namespace and a placeholder of a reserved example domain: text, never fetched.
    allowed = {"http://www.w3.org/2000/svg", "https://example.com/hooks/etikett"}
    for path in STATIC.rglob("*"):
        # Vendored libraries name XML namespaces and their homepages in comments; they are the
        # pinned files (test_console_vendor.py) and the page's CSP lets them reach no other host.
        if path.is_file() and "vendor" not in path.relative_to(STATIC).parts:
            text = path.read_text(encoding="utf-8")
            urls = set(re.findall(r"(?:https?:)?//[A-Za-z0-9.-]+\.[A-Za-z]{2,}[^\s\"'`)]*", text))
            assert urls <= allowed, (path.name, urls - allowed)
            assert "@import" not in text and "url(http" not in text, path.name
