"""Fault injection at the local moto server: chosen AWS requests answered with the error AWS gives
when it throttles (DynamoDB's `ProvisionedThroughputExceededException`, SQS's
`ThrottlingException`), before moto sees them, on the real wire protocol, so the SDK's retries
and the service's handling are what is tested.

moto 5.2 has no fault injection of its own (its `/moto-api/` offers reset, seeding, config for
batch, lambda and stepfunctions, state-manager transitions and the recorder), so local mode's
server, which already stands in front of moto's app, takes the rules:

    POST   {moto endpoint}/moto-api/etikett/faults  {"rules": [{"service": "dynamodb",
           "operations": ["TransactWriteItems"], "every": 2, "limit": 50}]}
    GET    … the rules with how often each has fired
    DELETE … no more faults

A rule fires on every `every`-th matching request (1: each one), at most `limit` times (none:
without end). Its `error` is `throttled` (the default) or `unavailable`: the 503
`ServiceUnavailable` an overloaded service answers, which the SDK retries like a timeout.
`operations` empty or absent: every operation of the service. Deterministic, so a test can say
how much it throttled.
"""

from __future__ import annotations

import json
import threading
from dataclasses import asdict, dataclass, field
from typing import Any

PATH = "/moto-api/etikett/faults"

# X-Amz-Target prefixes of the JSON protocol services, by the rule's service name.
_TARGETS = {"dynamodb": "DynamoDB_20120810.", "sqs": "AmazonSQS."}
_ERRORS = {
    "dynamodb": (
        "application/x-amz-json-1.0",
        "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException",
        "The level of configured provisioned throughput for the table was exceeded "
        "(injected by etikett.local.faults).",
    ),
    "sqs": (
        "application/x-amz-json-1.0",
        "com.amazonaws.sqs#ThrottlingException",
        "Rate exceeded (injected by etikett.local.faults).",
    ),
}
_UNAVAILABLE = {
    "dynamodb": "com.amazonaws.dynamodb.v20120810#ServiceUnavailable",
    "sqs": "com.amazonaws.sqs#ServiceUnavailable",
}
_Response = tuple[str, list[tuple[str, str]], bytes]


@dataclass
class Rule:
    service: str
    operations: list[str] = field(default_factory=list)
    every: int = 1
    limit: int | None = None
    error: str = "throttled"  # or "unavailable"
    seen: int = 0  # matching requests so far
    fired: int = 0  # of which answered with the fault

    def matches(self, service: str, operation: str) -> bool:
        return service == self.service and (not self.operations or operation in self.operations)


class Faults:
    """The rules in force, shared by the server's request threads."""

    def __init__(self) -> None:
        self._rules: list[Rule] = []
        self._lock = threading.Lock()

    def answer(self, method: str, path: str, target: str, body: bytes) -> _Response | None:
        """The response for this request if a fault takes it (or it is the control path)."""
        if path.rstrip("/") == PATH:
            return self._control(method, body)
        service = next((name for name, prefix in _TARGETS.items() if target.startswith(prefix)), "")
        if not service:
            return None
        operation = target.rpartition(".")[2]
        with self._lock:
            for rule in self._rules:
                if not rule.matches(service, operation):
                    continue
                rule.seen += 1
                if rule.seen % rule.every == 0 and (rule.limit is None or rule.fired < rule.limit):
                    rule.fired += 1
                    if rule.error == "unavailable":
                        return _unavailable(service)
                    return _throttled(service)
        return None

    def _control(self, method: str, body: bytes) -> _Response:
        with self._lock:
            if method == "POST":
                try:
                    self._rules = [_rule(item) for item in json.loads(body or b"{}")["rules"]]
                except (ValueError, KeyError, TypeError) as error:
                    return _json("400 Bad Request", {"error": str(error)})
            elif method == "DELETE":
                self._rules = []
            elif method != "GET":
                return _json("405 Method Not Allowed", {"error": "GET, POST or DELETE"})
            return _json("200 OK", {"rules": [asdict(rule) for rule in self._rules]})


def _rule(item: Any) -> Rule:
    if not isinstance(item, dict) or item.get("service") not in _TARGETS:
        raise ValueError(f"a rule names a service of {sorted(_TARGETS)}: {item!r}")
    rule = Rule(
        service=item["service"],
        operations=[str(name) for name in item.get("operations") or []],
        every=int(item.get("every", 1)),
        limit=None if item.get("limit") is None else int(item["limit"]),
        error=str(item.get("error", "throttled")),
    )
    if rule.every < 1 or (rule.limit is not None and rule.limit < 0):
        raise ValueError("every must be at least 1 and limit not negative")
    if rule.error not in ("throttled", "unavailable"):
        raise ValueError("error is throttled or unavailable")
    return rule


def _throttled(service: str) -> _Response:
    content_type, kind, message = _ERRORS[service]
    body = json.dumps({"__type": kind, "message": message}).encode()
    return "400 Bad Request", [("Content-Type", content_type)], body


def _unavailable(service: str) -> _Response:
    content_type = _ERRORS[service][0]
    message = "Service unavailable (injected by etikett.local.faults)."
    body = json.dumps({"__type": _UNAVAILABLE[service], "message": message}).encode()
    return "503 Service Unavailable", [("Content-Type", content_type)], body


def _json(status: str, value: Any) -> _Response:
    return status, [("Content-Type", "application/json")], json.dumps(value).encode()
