"""`etikett dev`'s log: one readable line per request and per background event (or JSON lines),
without the libraries' chatter, the functions' Lambda context or metric blobs.

The functions log as on AWS (Powertools' JSON with the invocation's context); here their records
are taken over by one handler on the root logger that shows what a person wants to read."""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Literal

LogFormat = Literal["text", "json"]

# Libraries that explain themselves at INFO (credentials found, endpoints chosen, every HTTP
# request again): only their warnings and errors are worth a line.
QUIET = ("botocore", "boto3", "urllib3", "pynamodb", "mangum", "httpx", "httpcore", "werkzeug")
# What a request line and an activity line carry (http_handler and etikett.domain.activity).
REQUEST_FIELDS = ("method", "path", "status", "ms", "actor")
EVENT_FIELDS = ("event", "job_id", "runner_id", "flow_id", "run_id", "outcome", "reason")


def _stamp(record: logging.LogRecord) -> datetime:
    return datetime.fromtimestamp(record.created, UTC)


def _fields(record: logging.LogRecord, names: tuple[str, ...]) -> dict[str, Any]:
    return {
        name: getattr(record, name) for name in names if getattr(record, name, None) is not None
    }


class TextFormatter(logging.Formatter):
    """`12:04:05  POST /api/v1/print 202  41 ms  admin (person)`; other lines with their level."""

    def format(self, record: logging.LogRecord) -> str:
        time = _stamp(record).astimezone().strftime("%H:%M:%S")
        if getattr(record, "method", None) and getattr(record, "status", None) is not None:
            ms = getattr(record, "ms", None)
            took = f"{ms:>5.0f} ms" if isinstance(ms, int | float) else ""
            actor = getattr(record, "actor", None) or "anonymous"
            return f"{time}  {record.method} {record.path} {record.status} {took}  {actor}"  # type: ignore[attr-defined]
        text = record.getMessage()
        if record.levelno < logging.WARNING:
            line = f"{time}  {text}"
        else:
            line = f"{time}  {record.levelname} {record.name}: {text}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the line's fields."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {
            "time": _stamp(record).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        line |= _fields(record, REQUEST_FIELDS) | _fields(record, EVENT_FIELDS)
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


# A Runner's routine traffic (its long poll for jobs, heartbeats, reading its configuration)
# would be a line a second per Runner: shown only when it fails. What the Runner does shows as
# the activity lines (job claimed, its outcome, flow runs) and its reports.
ROUTINE = (
    ("POST", "/api/v1/runner-agent/jobs/claim"),
    ("POST", "/api/v1/runner-agent/jobs/claim-received"),  # the claim event line tells it
    ("POST", "/api/v1/runner-agent/queue-access"),
    ("POST", "/api/v1/runner-agent/heartbeat"),
    ("GET", "/api/v1/runner-agent/config"),
    ("GET", "/api/v1/runner-agent/flows"),
)


class _RoutinePolls(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status", None)
        call = (getattr(record, "method", None), getattr(record, "path", None))
        return not (call in ROUTINE and isinstance(status, int) and status < 400)


_handler = logging.StreamHandler(sys.stderr)
# The functions' own: Powertools puts a filter on every handler of the root logger that drops
# its loggers' records (so that nothing is printed twice), also on ones added later.
_function_handler = logging.StreamHandler(sys.stderr)
_function_handler.addFilter(_RoutinePolls())


def configured_format() -> LogFormat:
    """The format `configure` was given ("text" before it was): local mode's other processes
    write their lines in it too."""
    return "json" if isinstance(_handler.formatter, JsonFormatter) else "text"


def configure(log_format: LogFormat) -> None:
    """The root logger writes to stderr in `log_format`; the libraries keep quiet."""
    handler = _handler
    formatter = JsonFormatter() if log_format == "json" else TextFormatter()
    handler.setFormatter(formatter)
    _function_handler.setFormatter(formatter)
    root = logging.getLogger()
    for existing in list(root.handlers):
        root.removeHandler(existing)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)


def adopt_function_loggers() -> None:
    """The functions' Powertools loggers (named `etikett-<group>`, their children below them)
    write through this log's handler instead of printing Powertools' JSON with the Lambda
    context."""
    for name, candidate in list(logging.root.manager.loggerDict.items()):
        if not name.startswith("etikett-") or not isinstance(candidate, logging.Logger):
            continue
        for handler in list(candidate.handlers):
            candidate.removeHandler(handler)
        candidate.setLevel(logging.INFO)
        child = "." in name
        candidate.propagate = child
        if not child:
            candidate.addHandler(_function_handler)
