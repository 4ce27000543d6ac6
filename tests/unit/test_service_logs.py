"""Service logs go through the function's Powertools logger: an unexpected error is one JSON line
with the invocation's context, and its details stay in the log, out of the answer."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys
from fastapi import FastAPI
from etikett.api import problems
from etikett.api.entry import http_handler

app = FastAPI()
problems.install(app)

@app.get("/boom")
def boom() -> None:
    raise RuntimeError("the store is down")

class Context:
    function_name = "etikett-misc"
    function_version = "$LATEST"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:eu-central-1:123456789012:function:etikett-misc"
    aws_request_id = "request-1"

event = json.loads(sys.argv[1])
response = http_handler(app, "misc")(event, Context())
print("ANSWER " + json.dumps(response))
"""

EVENT = {
    "version": "2.0",
    "routeKey": "GET /boom",
    "rawPath": "/boom",
    "rawQueryString": "",
    "headers": {"host": "example.com"},
    "requestContext": {
        "http": {"method": "GET", "path": "/boom", "protocol": "HTTP/1.1", "sourceIp": "192.0.2.1"},
        "requestId": "api-request-1",
        "stage": "$default",
    },
    "isBase64Encoded": False,
}


def test_an_unexpected_error_is_a_json_line_of_the_functions_logger() -> None:
    env = {
        "AWS_REGION": "eu-central-1",
        "POWERTOOLS_SERVICE_NAME": "etikett-misc",
        "POWERTOOLS_TRACE_DISABLED": "true",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "PATH": "/usr/bin:/bin",
    }
    ran = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(EVENT)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=REPO,
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    [answer] = [json.loads(line[7:]) for line in lines if line.startswith("ANSWER ")]
    assert answer["statusCode"] == 500
    assert "the store is down" not in answer["body"]
    records = [json.loads(line) for line in lines if line.startswith("{")]
    [error] = [record for record in records if record["level"] == "ERROR"]
    assert error["service"] == "etikett-misc"
    assert error["message"] == "unexpected error in GET /boom"
    assert error["function_request_id"] == "request-1"
    assert error["correlation_id"] == "api-request-1"
    assert "RuntimeError: the store is down" in error["exception"]
