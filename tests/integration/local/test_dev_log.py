"""`etikett dev`'s log: one readable line per request (time, method, path, status, ms, actor),
none of the libraries' chatter, Lambda context or metric blobs; JSON lines with
`--log-format json`. Each mode gets a fresh service of its own."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from support.client import PASSWORD, Api
from support.server import DevServer

# A request line: `12:04:05  POST /api/v1/auth/setup 201    41 ms  admin (person)`.
REQUEST_LINE = re.compile(
    r"^\d\d:\d\d:\d\d  (?P<method>[A-Z]+) (?P<path>/\S*) (?P<status>\d{3}) +(?P<ms>\d+) ms  "
    r"(?P<actor>.+)$"
)


def _requests(server: DevServer, api: Api) -> tuple[str, str]:
    """The log of a few requests, and the agent's subject."""
    offset = server.log.stat().st_size
    answer = api.post("/auth/setup", json={"username": "admin", "password": PASSWORD})
    assert answer.status_code == 201, answer.text
    admin = api.as_token(answer.json()["token"])
    assert admin.get("/labels").status_code == 200
    assert admin.post("/labels", json={"name": "Log"}).status_code == 201
    issued = admin.service_token("designer")
    assert api.as_token(issued["token"]).get("/auth/whoami").status_code == 200
    assert api.get("/nowhere").status_code == 404
    return server.log.read_text()[offset:], issued["subject"]


@pytest.fixture
def text_server(tmp_path: Path):
    server = DevServer(tmp_path / "home")
    server.start()
    yield server
    server.stop()


def test_a_few_requests_read_as_one_line_each(text_server: DevServer) -> None:
    log, agent = _requests(text_server, Api(text_server.url))
    lines = [line for line in log.splitlines() if line.strip()]
    seen = [m.groupdict() for line in lines if (m := REQUEST_LINE.match(line))]
    wanted = [
        ("POST", "/api/v1/auth/setup", "201", "anonymous"),
        ("GET", "/api/v1/labels", "200", "admin (person)"),
        ("POST", "/api/v1/labels", "201", "admin (person)"),
        ("GET", "/api/v1/auth/whoami", "200", f"{agent} (agent)"),
        ("GET", "/api/v1/nowhere", "404", "anonymous"),
    ]
    got = [(s["method"], s["path"], s["status"], s["actor"]) for s in seen]
    for line in wanted:
        assert line in got, log
    # Nothing but request lines: no library chatter, no Powertools JSON with the Lambda context,
    # no metric blobs (EMF), no idle connections reported as errors.
    others = [line for line in lines if not REQUEST_LINE.match(line)]
    assert others == [], log
    for noise in ("arn:aws:lambda", '"_aws"', "function_arn", "botocore", "Request timed out"):
        assert noise not in log


def test_json_lines_parse(tmp_path: Path) -> None:
    # `--log-format json`, or ETIKETT_LOG_FORMAT=json as here (DevServer passes no options).
    server = DevServer(tmp_path / "home", env={"ETIKETT_LOG_FORMAT": "json"})
    server.start()
    try:
        log, agent = _requests(server, Api(server.url))
    finally:
        server.stop()
    records = [json.loads(line) for line in log.splitlines() if line.strip()]
    requests = [r for r in records if r["message"] == "request"]
    assert {(r["method"], r["path"], r["status"]) for r in requests} >= {
        ("POST", "/api/v1/auth/setup", 201),
        ("GET", "/api/v1/auth/whoami", 200),
    }
    for record in requests:
        assert set(record) >= {"time", "level", "logger", "method", "path", "status", "ms"}
        assert isinstance(record["ms"], int | float)
    assert f"{agent} (agent)" in {r.get("actor") for r in requests}
