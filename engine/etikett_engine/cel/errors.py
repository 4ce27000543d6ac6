"""What a failed CEL expression reports: `CelInvalid` (422 `cel.invalid`) and
`CelLimitExceeded` (422 `cel.limit_exceeded`), with celpy's parse and evaluation errors put in
short CEL words (never an activation's values, never a Python class name)."""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from etikett_engine.cel import limits
from etikett_engine.errors import EtikettError, ProblemCode

_MESSAGE_LIMIT = 300


class CelInvalid(EtikettError):
    """A CEL expression that does not compile, names something unknown, or fails to evaluate."""

    code, title = ProblemCode.CEL_INVALID, "Invalid CEL expression"

    def __init__(
        self, expression: str, message: str, line: int | None = None, column: int | None = None
    ) -> None:
        where = f" (line {line}, column {column})" if line is not None else ""
        super().__init__(
            f"Invalid CEL expression: {message}{where}.",
            expression=expression,
            message=message,
            line=line,
            column=column,
        )


class CelLimitExceeded(CelInvalid):
    """An expression that exceeds what one evaluation may cost (`etikett_engine.cel.limits`):
    too long, too deeply nested, too much work, too large a value or result, too long a run."""

    code, title = ProblemCode.CEL_LIMIT_EXCEEDED, "CEL expression exceeds its limits"

    def __init__(self, expression: str, message: str, limit: str) -> None:
        EtikettError.__init__(
            self,
            f"The CEL expression was stopped: {message}.",
            expression=expression[:200],
            message=message,
            limit=limit,
        )

    @classmethod
    def of(cls, source: str, exceeded: limits.Exceeded) -> CelLimitExceeded:
        return cls(source, exceeded.message, exceeded.limit)


def parse_message(error: Exception) -> str:
    cause = error.__context__
    token = getattr(cause, "token", None)
    if token is not None:
        if token.type == "$END" or not token.value:
            return "unexpected end of expression"
        return f"unexpected {token.value!r}"
    char = getattr(cause, "char", None)
    if char in ("'", '"'):
        return "unterminated string"
    if char is not None:
        return f"unexpected character {char!r}"
    return str(error.args[0]).splitlines()[0] if error.args else "syntax error"


def python_error_message(error: BaseException) -> str:
    original = error
    if isinstance(error, KeyError) and error.__context__ is not None:
        # celpy's result() looks exceptions up by exact class and fails with a KeyError on a
        # subclass (pendulum's ParserError for timestamp("garbage")); the original says more.
        original = error.__context__
    text = str(original) or type(original).__name__
    if isinstance(original, AttributeError | TypeError):
        return f"no such overload: {text}"
    if isinstance(original, ValueError):
        return f"invalid value: {text}"
    return text


def eval_message(error: Exception, unbound: AbstractSet[str]) -> str:
    # celpy's CELEvalError args: (text, Python exception class, that exception's args).
    args = error.args
    text = str(args[0]) if args else "evaluation error"
    cause = args[1] if len(args) > 1 and isinstance(args[1], type) else None
    detail = args[2] if len(args) > 2 and isinstance(args[2], tuple) else ()
    first = detail[0] if detail else None
    if (
        cause is not None
        and issubclass(cause, KeyError)
        and isinstance(first, str)
        and (first in unbound)
    ):
        return f"no value for {first!r}"
    if text.startswith("undeclared reference to") or text == "unbound function":
        return f"undeclared reference to {first!r}" if first else clean(text)
    if text == "no such overload" or text.startswith("found no matching overload"):
        if cause is not None and issubclass(cause, AttributeError) and first:
            return clean(f"no such overload: {first}")
        # Python's TypeError text (about NotImplementedType) would only confuse here.
        return "no such overload: the operand types do not fit (see int(), double(), string())"
    if text == "return error for overflow":
        if first == "overflow" or (cause is not None and issubclass(cause, OverflowError)):
            return "overflow"
        return clean(f"invalid value: {first}") if first else "invalid value"
    return clean(text)


_CEL_CLASS = r"\b(Int|Uint|Double|String|Bool|Bytes|List|Map|Timestamp|Duration)Type\b"


def clean(text: str) -> str:
    # Never echo an activation (it holds every variable value) and speak CEL type names.
    text = re.sub(r"\s*\(in (?:activation|container) .*", "", text, flags=re.S)
    text = re.sub(_CEL_CLASS, lambda m: m[1].lower(), text.replace("<class 'celpy.celtypes.", "<"))
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."
