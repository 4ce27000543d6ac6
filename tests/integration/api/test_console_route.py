"""The console comes from the API's own origin through the local gateway (routes from the
template), beside /api/v1 and /mcp without taking any of their paths."""

from __future__ import annotations

import re

import httpx

from support.server import DevServer


def test_the_gateway_serves_the_console_beside_the_api(dev_server: DevServer) -> None:
    with httpx.Client(base_url=dev_server.url, timeout=30) as http:
        root = http.get("/")
        assert root.status_code == 302 and root.headers["location"] == "/console"
        page = http.get("/console/labels/lbl_anything")
        assert page.status_code == 200
        assert page.headers["cache-control"] == "no-cache"
        assert "script-src 'self'" in page.headers["content-security-policy"]
        script = re.search(r'src="(/console/assets/[0-9a-f]{16}/app\.js)"', page.text)
        assert script, page.text
        asset = http.get(script.group(1), headers={"accept-encoding": "gzip"})
        assert asset.status_code == 200
        assert asset.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert asset.headers["content-encoding"] == "gzip"
        assert "export function navigate" in asset.text

        # The API and the MCP endpoint keep their paths.
        assert http.get("/api/v1/version").json()["api_version"]
        assert http.get("/mcp").status_code == 405
        missing = http.post("/console")
        assert missing.status_code in (404, 405)
        assert missing.headers["content-type"].startswith("application/problem+json")
