"""What a flow's action nodes ask the world to do, and the two ways it is answered: a dry run
lists each side effect without performing it; a Runner performs it (its own `Effects`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol

EffectKind = Literal["print", "http", "file", "log"]


@dataclass(frozen=True)
class PrintIntent:
    node_id: str
    label: str  # lbl_… or lbl_…@N
    printer: str  # the alias
    copies: int
    variables: dict[str, Any]
    idempotency_key: str  # run, node and record: a retried run never prints twice


@dataclass(frozen=True)
class HttpIntent:
    node_id: str
    url: str
    method: str
    body: Any
    credential: str | None


@dataclass(frozen=True)
class FileIntent:
    node_id: str
    path: str
    content: str


@dataclass(frozen=True)
class LogIntent:
    node_id: str
    level: str
    message: str


@dataclass(frozen=True)
class Outcome:
    """What came of one side effect: whether it was performed, and what it did or would do."""

    performed: bool
    detail: dict[str, Any]
    result: Any = None  # what the node adds to the record (http: {status, body})


class Effects(Protocol):
    def print(self, intent: PrintIntent) -> Outcome: ...

    def http(self, intent: HttpIntent) -> Outcome: ...

    def file(self, intent: FileIntent) -> Outcome: ...

    def log(self, intent: LogIntent) -> Outcome: ...


class EffectFailed(Exception):
    """A side effect that failed for this record only (the run goes on with the others).
    `detail`, when given, is what it would have done and why it was refused: the side effect
    is then listed with it (a dry run shows the refusal a real run would meet)."""

    def __init__(self, message: str, detail: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.detail = detail


class DryRun:
    """Performs nothing. Prints are described by `describe_print` (the service resolves the
    label and the counter values it would take, without taking them)."""

    def __init__(self, describe_print: Any = None) -> None:
        self._describe_print = describe_print

    def print(self, intent: PrintIntent) -> Outcome:
        detail: dict[str, Any] = {
            "label": intent.label,
            "printer": intent.printer,
            "copies": intent.copies,
            "variables": intent.variables,
        }
        if self._describe_print is not None:
            detail.update(self._describe_print(intent))
        return Outcome(performed=False, detail=detail, result={**detail, "job_id": None})

    def http(self, intent: HttpIntent) -> Outcome:
        detail = {"method": intent.method, "url": intent.url, "body": intent.body}
        if intent.credential:
            detail["credential"] = intent.credential
        return Outcome(performed=False, detail=detail, result={"status": None, "body": None})

    def file(self, intent: FileIntent) -> Outcome:
        return Outcome(
            performed=False,
            detail={"path": intent.path, "bytes": len(intent.content.encode())},
        )

    def log(self, intent: LogIntent) -> Outcome:
        return Outcome(performed=False, detail={"level": intent.level, "message": intent.message})
