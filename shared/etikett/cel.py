"""CEL expressions of labels and forms: check, evaluate with typed variables, label helpers.

Built on cel-python (`celpy`), imported and set up on first use only: its parser takes about
0.3 s to build, which a Lambda cold start that never evaluates an expression should not pay.
Each expression is parsed and transpiled to Python once (celpy's compiled mode, about five times
faster than its interpreter) and every evaluation runs in its own namespace, so threads can share
the compiled expressions. Every evaluation is bounded by `etikett.cel_limits` (size, work, time):
an exceeded limit is `CelLimitExceeded` (422 `cel.limit_exceeded`).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import re
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, cast

from etikett import cel_limits
from etikett.errors import EtikettError, ProblemCode

if TYPE_CHECKING:
    from etikett.dsl.label import VariableType

__all__ = [
    "FUNCTIONS",
    "CelInvalid",
    "CelLimitExceeded",
    "Expression",
    "VariableType",
    "check",
    "coerce",
    "evaluate",
    "macro_depth",
    "to_cel",
    "type_name",
]

MAX_WIDTH = 100  # pad(): a label line never needs more; stops pad(x, 10**9) eating memory
MAX_DECIMALS = 20
_MESSAGE_LIMIT = 300
_ALWAYS_KNOWN = frozenset({"now", "counters"})
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1  # CEL's int


def __getattr__(name: str) -> Any:
    # VariableType is re-exported lazily: etikett.dsl.label imports pydantic (~0.2 s).
    if name == "VariableType":
        from etikett.dsl.label import VariableType

        return VariableType
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    """An expression that exceeds what one evaluation may cost (`etikett.cel_limits`): too long,
    too deeply nested, too much work, too large a value or result, too long a run."""

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
    def of(cls, source: str, exceeded: cel_limits.Exceeded) -> CelLimitExceeded:
        return cls(source, exceeded.message, exceeded.limit)


# ---------------------------------------------------------------------------------------------
# Conversions between JSON/Python values and CEL values
# ---------------------------------------------------------------------------------------------

# Patterns stay strings (re caches them on first use): compiling at import costs milliseconds.
_INTEGER = r"[+-]?[0-9]+"
_NUMBER = r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_DATE = r"[0-9]{4}-[0-9]{2}-[0-9]{2}"
_TIMESTAMP = (
    r"(?P<base>[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}:[0-9]{2})"
    r"(?:\.(?P<fraction>[0-9]+))?(?P<offset>[Zz]|[+-][0-9]{2}:[0-9]{2})"
)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_number(value: Any) -> bool:
    # bool is an int in Python (and celpy's BoolType too); JSON true is not a number.
    return isinstance(value, int | float) and not _is_bool(value)


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "BoolType"


def _plain_number(value: Any) -> Any:
    """A Decimal (what boto3 reads DynamoDB numbers as) as int or float; anything else as is."""
    decimal = sys.modules.get("decimal")  # not imported means no value can be a Decimal
    if decimal is not None and isinstance(value, decimal.Decimal) and value.is_finite():
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def _parse_date(text: str) -> dt.datetime:
    text = text.strip()
    try:
        if re.fullmatch(_DATE, text):
            return dt.datetime.fromisoformat(text).replace(tzinfo=dt.UTC)
        match = re.fullmatch(_TIMESTAMP, text)
        if match:
            # RFC 3339 allows any number of fraction digits; datetime keeps microseconds.
            fraction = (match["fraction"] or "")[:6].ljust(6, "0")
            offset = "+00:00" if match["offset"] in "Zz" else match["offset"]
            parsed = dt.datetime.fromisoformat(f"{match['base']}.{fraction}{offset}")
            return parsed.astimezone(dt.UTC)
    except ValueError:
        pass  # a well-formed but impossible date, e.g. 2026-02-30
    raise ValueError(f"expected a date (2026-11-22) or an RFC 3339 timestamp, got {_show(text)}")


def _utc(value: dt.datetime) -> dt.datetime:
    # A naive datetime is taken as UTC: the service keeps every time in UTC.
    if value.tzinfo is None:
        return value.replace(tzinfo=dt.UTC)
    return value.astimezone(dt.UTC)


def coerce(value: Any, declared_type: VariableType) -> Any:
    """Validate and convert one JSON input value (print data) for a declared variable type.

    Returns int, float, bool, str or a UTC datetime; raises ValueError with a short message.
    """
    value = _plain_number(value)
    if declared_type == "string":
        if isinstance(value, str):
            return value
        if _is_number(value):
            return str(value)
        raise ValueError(f"expected a string, got {_show(value)}")
    if declared_type == "integer":
        number: int | None = None
        if _is_number(value) and isinstance(value, int):
            number = int(value)
        elif _is_number(value) and math.isfinite(value) and float(value).is_integer():
            number = int(value)  # 3.0 from a JSON client that writes every number as a float
        elif isinstance(value, str) and re.fullmatch(_INTEGER, value.strip()):
            number = int(value.strip())
        if number is None:
            raise ValueError(f"expected an integer, got {_show(value)}")
        if not _INT64_MIN <= number <= _INT64_MAX:
            raise ValueError(f"{number} is out of range for a 64-bit integer")
        return number
    if declared_type == "number":
        if _is_number(value) and math.isfinite(value):
            return float(value)
        if isinstance(value, str) and re.fullmatch(_NUMBER, value.strip()):
            parsed = float(value.strip())
            if math.isfinite(parsed):
                return parsed
        raise ValueError(f"expected a number, got {_show(value)}")
    if declared_type == "boolean":
        if _is_bool(value):
            return bool(value)
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower() == "true"
        raise ValueError(f"expected true or false, got {_show(value)}")
    if declared_type == "date":
        if isinstance(value, dt.datetime):
            return _utc(value)
        if isinstance(value, dt.date):
            return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC)
        if isinstance(value, str):
            return _parse_date(value)
        raise ValueError(
            f"expected a date (2026-11-22) or an RFC 3339 timestamp, got {_show(value)}"
        )
    raise ValueError(f"unknown variable type {declared_type!r}")


def to_cel(value: Any, declared_type: VariableType | None = None) -> Any:
    """Convert a Python/JSON value to a celpy value: as declared, else by its Python type.

    None stays None (CEL null). Raises ValueError (value does not fit the declared type) or
    TypeError (a Python type CEL has no counterpart for).
    """
    ct = _runtime().celtypes
    if value is None:
        return None
    value = coerce(value, declared_type) if declared_type is not None else _plain_number(value)
    if _is_bool(value):
        return ct.BoolType(bool(value))
    if isinstance(value, int):
        return ct.IntType(value)
    if isinstance(value, float):
        return ct.DoubleType(value)
    if isinstance(value, str):
        return ct.StringType(value)
    if isinstance(value, bytes):
        return ct.BytesType(value)
    if isinstance(value, dt.datetime):
        return ct.TimestampType(_utc(value))
    if isinstance(value, dt.date):
        return ct.TimestampType(dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC))
    if isinstance(value, dt.timedelta):
        return ct.DurationType(value)
    if isinstance(value, Mapping):
        return ct.MapType({to_cel(k): to_cel(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return ct.ListType([to_cel(item) for item in value])
    raise TypeError(f"no CEL type for a Python {type(value).__name__}")


def type_name(value: Any) -> str:
    """The CEL type name of a plain Python value as `evaluate` returns it."""
    if value is None:
        return "null_type"
    if _is_bool(value):
        return "bool"
    for python_type, name in _TYPE_NAMES:
        if isinstance(value, python_type):
            return name
    raise TypeError(f"no CEL type for a Python {type(value).__name__}")


_TYPE_NAMES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (int, "int"),
    (float, "double"),
    (str, "string"),
    (bytes, "bytes"),
    (dt.date, "timestamp"),  # datetime is a date; a bare date converts to midnight UTC
    (dt.timedelta, "duration"),
    ((list, tuple), "list"),
    (Mapping, "map"),
)


# ---------------------------------------------------------------------------------------------
# Helper functions available in every expression
# ---------------------------------------------------------------------------------------------

FUNCTIONS: list[dict[str, str]] = []
_HELPERS: dict[str, Callable[..., Any]] = {}


class _HelperError(Exception):
    """Raised by a helper for a bad argument; becomes a CEL evaluation error with this text."""


def _helper(name: str, signature: str, doc: str) -> Callable[[Callable[..., Any]], Any]:
    def register(function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def run(*args: Any) -> Any:
            error_type = _runtime().eval_error
            for arg in args:
                # celpy's compiled code passes an argument's error on instead of stopping.
                if isinstance(arg, error_type):
                    return arg
            try:
                return cel_limits.helper_called(args, function(*args))
            except _HelperError as ex:
                return error_type(f"{name}(): {ex}")
            except TypeError:
                return error_type(f"{name}() takes {signature}")

        _HELPERS[name] = run
        FUNCTIONS.append({"name": name, "signature": signature, "doc": doc})
        return run

    return register


def _timestamp_arg(value: Any) -> dt.datetime:
    if not isinstance(value, dt.datetime):
        raise _HelperError(f"expected a timestamp, got {_cel_type_of(value)}")
    return value.astimezone(dt.UTC)


def _int_arg(value: Any, what: str) -> int:
    if _is_bool(value) or not isinstance(value, int):
        raise _HelperError(f"{what} must be an int, got {_cel_type_of(value)}")
    return int(value)


def _str_arg(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise _HelperError(f"{what} must be a string, got {_cel_type_of(value)}")
    return str(value)


@_helper(
    "format_date",
    "(timestamp, string) -> string",
    'The timestamp in UTC formatted with a strftime pattern: format_date(now, "%y%m%d").',
)
def _format_date(timestamp: Any, pattern: Any) -> Any:
    moment = _timestamp_arg(timestamp)
    text = _str_arg(pattern, "the pattern")
    try:
        return _runtime().celtypes.StringType(moment.strftime(text))
    except ValueError as ex:
        raise _HelperError(f"bad pattern: {ex}") from ex


@_helper(
    "add_days",
    "(timestamp, int) -> timestamp",
    "The timestamp moved by a number of days (negative goes back): add_days(now, 30).",
)
def _add_days(timestamp: Any, days: Any) -> Any:
    moment = _timestamp_arg(timestamp)
    try:
        return _runtime().celtypes.TimestampType(moment + dt.timedelta(days=_int_arg(days, "days")))
    except OverflowError as ex:
        raise _HelperError("the date is out of range") from ex


@_helper(
    "pad",
    "(int | string, int) -> string",
    'Zero-padded on the left to a width (longer values stay whole): pad(42, 6) == "000042".',
)
def _pad(value: Any, width: Any) -> Any:
    size = _int_arg(width, "the width")
    if not 0 <= size <= MAX_WIDTH:
        raise _HelperError(f"the width must be between 0 and {MAX_WIDTH}")
    if isinstance(value, str):
        text = str(value)
    elif _is_bool(value) or not isinstance(value, int):
        raise _HelperError(f"expected an int or a string, got {_cel_type_of(value)}")
    else:
        text = str(int(value))
    return _runtime().celtypes.StringType(text.zfill(size))


def _gs1_digit(digits: Any) -> str:
    text = _str_arg(digits, "the digits")
    if not text or not text.isascii() or not text.isdigit():
        raise _HelperError(f"expected a string of digits, got {_show(text)}")
    # GS1 mod 10: weights 3, 1, 3, ... from the rightmost data digit.
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(text)))
    return str((10 - total % 10) % 10)


@_helper(
    "gs1_check_digit",
    "(string) -> string",
    "The GS1 mod-10 check digit of GTIN-8/12/13/14 or SSCC digits given without it.",
)
def _gs1_check_digit(digits: Any) -> Any:
    return _runtime().celtypes.StringType(_gs1_digit(digits))


@_helper(
    "with_check_digit",
    "(string) -> string",
    'The digits followed by their GS1 check digit: with_check_digit("400638133393").',
)
def _with_check_digit(digits: Any) -> Any:
    return _runtime().celtypes.StringType(str(digits) + _gs1_digit(digits))


@_helper(
    "format_number",
    "(int | double, int) -> string",
    "The number with exactly that many decimals, halves rounded up: format_number(2.5, 2).",
)
def _format_number(number: Any, decimals: Any) -> Any:
    from decimal import ROUND_HALF_UP, Decimal

    places = _int_arg(decimals, "decimals")
    if not 0 <= places <= MAX_DECIMALS:
        raise _HelperError(f"decimals must be between 0 and {MAX_DECIMALS}")
    if _is_bool(number) or not isinstance(number, int | float):
        raise _HelperError(f"expected a number, got {_cel_type_of(number)}")
    if isinstance(number, float) and not math.isfinite(number):
        raise _HelperError(f"cannot format {float(number)}")
    # repr() is the shortest text that reads back as the same double, so 2.675 rounds to 2.68
    # as a person expects, not to 2.67 as its binary value would.
    exact = Decimal(repr(float(number))) if isinstance(number, float) else Decimal(int(number))
    rounded = exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if rounded == 0:
        rounded = abs(rounded)  # no "-0.00"
    return _runtime().celtypes.StringType(f"{rounded:f}")


@_helper("upper", "(string) -> string", "The string in upper case.")
def _upper(text: Any) -> Any:
    return _runtime().celtypes.StringType(_str_arg(text, "the argument").upper())


@_helper("lower", "(string) -> string", "The string in lower case.")
def _lower(text: Any) -> Any:
    return _runtime().celtypes.StringType(_str_arg(text, "the argument").lower())


@_helper("trim", "(string) -> string", "The string without leading and trailing whitespace.")
def _trim(text: Any) -> Any:
    return _runtime().celtypes.StringType(_str_arg(text, "the argument").strip())


def _cel_type_of(value: Any) -> str:
    """The CEL type name of a celpy value (for messages)."""
    try:
        return type_name(_to_python(value, ""))
    except (TypeError, CelInvalid):
        return type(value).__name__


# ---------------------------------------------------------------------------------------------
# The celpy runtime, compiled programs and evaluation
# ---------------------------------------------------------------------------------------------

# Names usable as values besides variables: CEL's type names (`type(x) == int`).
_TYPE_IDENTS = frozenset({"bool", "bytes", "double", "duration", "int", "list", "map"})
_TYPE_IDENTS |= {"null_type", "string", "timestamp", "type", "uint"}
# Macros bind their first argument(s) as a local name; `reduce` binds two.
_MACROS = {"map": 1, "filter": 1, "all": 1, "exists": 1, "exists_one": 1, "reduce": 2}
_IDENT = r"[_a-zA-Z][_a-zA-Z0-9]*"
# celpy 0.5's transpiler leaves has() a Python bool, which `?:` and `!` then refuse; wrap it.
_HAS_LAMBDA = (
    r"lambda activation: (not isinstance\(celpy\.evaluation\.result\(activation, ex_\d+_h\), "
    r"CELEvalError\))"
)


class _Runtime:
    """celpy, loaded once per process on first use."""

    def __init__(self) -> None:
        import celpy
        import celpy.celtypes
        import celpy.evaluation

        self.celpy: Any = celpy
        self.celtypes: Any = celpy.celtypes
        self.eval_error: type[Exception] = celpy.evaluation.CELEvalError
        # The CompiledRunner's parser makes the trees the transpiler needs (celpy shares one
        # parser per process, shaped by the first Environment; see _compile for the other case).
        self.environment: Any = celpy.Environment(runner_class=celpy.CompiledRunner)
        # celpy's operations that build or scan values, charged to the evaluation's budget, and
        # the label helpers (which charge too).
        self.base_activation: Any = celpy.evaluation.Activation(
            functions={**cel_limits.functions(), **_HELPERS}
        )
        # Transpiled code calls functions by module path (etikett.cel._pad) and celpy's own by
        # celpy.evaluation's globals; each evaluation runs in its own copy (see _Program.run).
        self.globals: dict[str, Any] = dict(vars(celpy.evaluation))
        self.globals["etikett"] = sys.modules["etikett"]
        builtin = {name for name in celpy.evaluation.base_functions if re.fullmatch(_IDENT, name)}
        self.functions = frozenset(builtin | set(_HELPERS) | {"has", "dyn"})


_RUNTIME: _Runtime | None = None
_RUNTIME_LOCK = threading.Lock()
# The transpiler decorates the parse tree in place; one compile at a time (each is done once).
_COMPILE_LOCK = threading.Lock()


def _runtime() -> _Runtime:
    global _RUNTIME
    runtime = _RUNTIME
    if runtime is None:
        with _RUNTIME_LOCK:
            if _RUNTIME is None:
                _RUNTIME = _Runtime()
            runtime = _RUNTIME
    return runtime


class _Reference:
    """A name the expression uses: a variable, a function, or a macro's variable."""

    __slots__ = ("column", "kind", "line", "name")

    def __init__(self, kind: str, token: Any) -> None:
        self.kind = kind  # "name" | "function" | "macro_variable"
        self.name = str(token.value)
        self.line: int | None = token.line
        self.column: int | None = token.column


class _Bound:
    """The activation a macro-free expression reads its names from: plain attributes, so
    `activation.record` costs an attribute lookup instead of celpy's name resolution."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        self.__dict__.update(values)

    def __getattr__(self, name: str) -> Any:
        # Type names (`int`, `string`) and functions as celpy's Activation has them; an unbound
        # name raises KeyError there, which evaluates into "no value for …".
        return getattr(_runtime().base_activation, name)


class _Program:
    """One compiled expression: runnable code, the free names it reads, its problems."""

    __slots__ = ("code", "function", "names", "problems", "tree")

    def __init__(self, tree: Any, code: Any, problems: tuple[_Reference, ...]) -> None:
        self.tree = tree
        self.code = code  # a code object, or None when only the interpreter can run the tree
        self.problems = problems  # free names, unknown functions, bad macro variables
        self.names = frozenset(ref.name for ref in problems if ref.kind == "name")
        # Macro-free code runs as one function of its activation: no per-evaluation exec, no
        # copied globals, no cloned celpy Activation (macros need celpy's nested activations).
        self.function: Any = None
        if isinstance(code, tuple):
            self.code, self.function = code

    def run(self, values: Mapping[str, Any]) -> Any:
        runtime = _runtime()
        if self.function is not None:
            result = self.function(_Bound(values))
            if isinstance(result, runtime.eval_error):
                raise result
            return result
        if self.code is None:
            evaluator = cel_limits.evaluator(self.tree, runtime.base_activation)
            return evaluator.evaluate(values)
        activation = runtime.base_activation.clone()
        activation.identifiers.load_values(values)
        # celpy's own CompiledRunner puts the activation into celpy.evaluation's module globals,
        # which races between threads; a private copy of those globals per evaluation does not.
        namespace = dict(runtime.globals)
        namespace["base_activation"] = activation
        exec(self.code, namespace)
        result = namespace["CEL"]
        if isinstance(result, runtime.eval_error):
            raise result
        return result


@functools.lru_cache(maxsize=1024)
def _compile(source: str) -> _Program | CelInvalid:
    """Parse and transpile once per source; a failure is cached as the CelInvalid to raise."""
    runtime = _runtime()
    celpy = runtime.celpy
    try:
        with _COMPILE_LOCK:
            tree = runtime.environment.compile(source)
            cel_limits.check_depth(_macro_depth(tree))
            problems = _references(tree, runtime.functions)
            code = _transpile(tree, runtime) if isinstance(tree, celpy.TranspilerTree) else None
            # A plain tree means another part of the process built celpy's shared parser for
            # the interpreter first: such trees can only be interpreted (slower, same results).
    except celpy.CELParseError as ex:
        return CelInvalid(source, _parse_message(ex), ex.line, ex.column)
    except RecursionError:
        return CelInvalid(source, "the expression is nested too deeply")
    except cel_limits.Exceeded as exceeded:
        return CelLimitExceeded.of(source, exceeded)
    return _Program(tree, code, problems)


def _transpile(tree: Any, runtime: _Runtime) -> Any:
    try:
        transpiler = runtime.celpy.Transpiler(ast=tree, activation=runtime.base_activation)
        transpiler.transpile()
    except RecursionError:
        raise
    except Exception:
        # The transpiler gives up on some malformed macros ([1].map(1, 2)); check() reports
        # them, and the interpreter turns them into evaluation errors.
        return None
    text = re.sub(
        _HAS_LAMBDA, r"lambda activation: celpy.celtypes.BoolType(\1)", transpiler.source_text
    )
    # Comprehensions call celpy directly, not through the activation: charge their steps.
    text = text.replace("celpy.evaluation.macro_", "etikett.cel_limits.macro_")
    try:
        code = compile(text, "<cel>", "exec")
        if "macro_" in text or "activation.resolve" in text:
            return code
        body = "".join(f"    {line}\n" for line in text.splitlines())
        namespace = dict(runtime.globals)
        exec(
            compile(f"def _cel(base_activation):\n{body}    return CEL\n", "<cel>", "exec"),
            namespace,
        )
        return code, namespace["_cel"]
    except (SyntaxError, MemoryError) as ex:
        # Python's own parser stops at 200 nested parentheses ("too many nested parentheses").
        raise RecursionError from ex


def _parse_message(error: Exception) -> str:
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


def _references(tree: Any, functions: frozenset[str]) -> tuple[_Reference, ...]:
    """Free variable names (not bound by a macro), unknown functions and bad macro variables,
    in source order."""
    from lark import Tree

    found: list[_Reference] = []
    # An explicit stack: CEL trees are deep (every precedence level nests), recursion is not.
    stack: list[tuple[Any, frozenset[str]]] = [(tree, frozenset())]
    while stack:
        node, bound = stack.pop()
        if not isinstance(node, Tree):
            continue
        kind, children = node.data, cast(list[Any], node.children)
        if kind in ("ident", "dot_ident"):
            if children[0].value not in bound:
                found.append(_Reference("name", children[0]))
        elif kind in ("ident_arg", "dot_ident_arg"):
            if children[0].value not in functions:
                found.append(_Reference("function", children[0]))
            stack.extend((child, bound) for child in children[1:])
        elif kind == "member_dot_arg":
            member, method = children[0], children[1]
            args = children[2].children if len(children) > 2 else []
            binds = _MACROS.get(method.value, 0)
            stack.append((member, bound))
            if binds and len(args) > binds:
                local = set(bound)
                for variable in args[:binds]:
                    token = _plain_name(variable)
                    if token is None:
                        found.append(_Reference("macro_variable", method))
                    else:
                        local.add(token.value)
                stack.extend((arg, frozenset(local)) for arg in args[binds:])
            else:
                if method.value not in functions and method.value != "min":
                    found.append(_Reference("function", method))
                stack.extend((arg, bound) for arg in args)
        else:
            stack.extend((child, bound) for child in children)
    return tuple(sorted(found, key=lambda ref: (ref.line or 0, ref.column or 0)))


def _plain_name(expr: Any) -> Any:
    """The IDENT token when a macro argument is just a name (`x` in `list.map(x, x * 2)`)."""
    node = expr
    while getattr(node, "data", None) not in (None, "ident") and len(node.children) == 1:
        node = node.children[0]
    return node.children[0] if getattr(node, "data", None) == "ident" else None


def _program(source: str) -> _Program:
    if not isinstance(source, str):
        raise TypeError("a CEL expression is a string")
    try:
        cel_limits.check_source(source)  # before parsing: parsing is what it would cost
    except cel_limits.Exceeded as exceeded:
        raise CelLimitExceeded.of(source, exceeded) from None
    compiled = _compile(source)
    if isinstance(compiled, CelLimitExceeded):
        raise CelLimitExceeded(source, compiled.params["message"], compiled.params["limit"])
    if isinstance(compiled, CelInvalid):
        raise CelInvalid(**compiled.params)  # a fresh exception each time: tracebacks differ
    return compiled


def check(
    source: str,
    declared: Mapping[str, VariableType] | None = None,
    *,
    extra_names: Iterable[str] = (),
) -> None:
    """Compile only. Raises CelInvalid for syntax errors, unknown functions and names other
    than the declared variables, `now`, `counters` and extra_names (with their position)."""
    program = _program(source)
    known = _ALWAYS_KNOWN | _TYPE_IDENTS | set(declared or ()) | set(extra_names)
    for ref in program.problems:  # in source order: the first problem is reported
        if ref.kind == "name" and ref.name in known:
            continue
        message = {
            "name": f"undeclared name {ref.name!r}",
            "function": f"unknown function {ref.name!r}",
            "macro_variable": f"the first argument of {ref.name}() must be a plain name",
        }[ref.kind]
        raise CelInvalid(source, message, ref.line, ref.column)


def evaluate(
    source: str,
    values: Mapping[str, Any],
    declared: Mapping[str, VariableType] | None = None,
    *,
    now: dt.datetime | None = None,
    counters: Mapping[str, Any] | None = None,
) -> Any:
    """Evaluate against the values (converted as declared), `now` and `counters`.

    Returns a plain Python value (str, int, float, bool, UTC datetime, timedelta, bytes, list,
    dict or None). Raises CelInvalid for syntax and evaluation errors and for a value that does
    not fit its declared type.
    """
    expression = Expression(source)
    declared = declared or {}
    needed = expression.names
    try:
        cel_limits.check_variables({k: v for k, v in values.items() if k in needed})
    except cel_limits.Exceeded as exceeded:
        raise CelLimitExceeded.of(source, exceeded) from None
    bound: dict[str, Any] = {}
    for name, value in values.items():
        # Only what the expression reads is converted: labels declare many variables.
        if name in needed and name not in _ALWAYS_KNOWN:
            try:
                bound[name] = to_cel(value, declared.get(name))
            except (TypeError, ValueError) as ex:
                raise CelInvalid(source, f"variable {name!r}: {ex}") from ex
    # `now` and `counters` are reserved: the keyword arguments supply them, never `values`.
    if "now" in needed:
        bound["now"] = to_cel(now or dt.datetime.now(dt.UTC))
    if "counters" in needed:
        bound["counters"] = to_cel(dict(counters or {}))
    return expression.run(bound)


class Expression:
    """One expression, compiled once, run many times on values already converted by to_cel
    (a flow converts a record once per node, not once per expression)."""

    __slots__ = ("_program", "names", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._program = _program(source)
        self.names: frozenset[str] = self._program.names

    def run(self, bound: Mapping[str, Any]) -> Any:
        """The plain Python value; CelInvalid for evaluation errors (never another exception),
        CelLimitExceeded when it exceeded what one evaluation may cost."""
        source = self.source
        runtime = _runtime()
        with cel_limits.active(cel_limits.Budget()) as budget:
            try:
                result = cel_limits.result_checked(self._program.run(bound))
            except Exception as ex:
                # A limit raised inside celpy may come back wrapped, or swallowed by `||`:
                # the budget knows either way.
                if budget.failure is not None:
                    raise CelLimitExceeded.of(source, budget.failure) from None
                if isinstance(ex, runtime.eval_error):
                    raise CelInvalid(source, _eval_message(ex, self.names - set(bound))) from ex
                if isinstance(ex, RecursionError):
                    raise CelInvalid(source, "the expression is nested too deeply") from ex
                # celpy lets some Python errors through; never a 500 for them
                raise CelInvalid(source, _clean(_python_error_message(ex))) from ex
            if budget.failure is not None:
                raise CelLimitExceeded.of(source, budget.failure)
        return _to_python(result, source)


def macro_depth(source: str) -> int:
    """How deeply comprehension macros (map, filter, all, exists, …) nest in the expression:
    the cost of `a.map(x, b.map(y, …))` multiplies with each level, so callers bound it."""
    return _macro_depth(_program(source).tree)


def _macro_depth(tree: Any) -> int:
    from lark import Tree

    deepest = 0
    stack: list[tuple[Any, int]] = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, Tree):
            continue
        children = cast(list[Any], node.children)
        if node.data == "member_dot_arg" and str(children[1].value) in _MACROS:
            depth += 1
            deepest = max(deepest, depth)
        stack.extend((child, depth) for child in node.children)
    return deepest


def _python_error_message(error: BaseException) -> str:
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


def _eval_message(error: Exception, unbound: AbstractSet[str]) -> str:
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
        return f"undeclared reference to {first!r}" if first else _clean(text)
    if text == "no such overload" or text.startswith("found no matching overload"):
        if cause is not None and issubclass(cause, AttributeError) and first:
            return _clean(f"no such overload: {first}")
        # Python's TypeError text (about NotImplementedType) would only confuse here.
        return "no such overload: the operand types do not fit (see int(), double(), string())"
    if text == "return error for overflow":
        if first == "overflow" or (cause is not None and issubclass(cause, OverflowError)):
            return "overflow"
        return _clean(f"invalid value: {first}") if first else "invalid value"
    return _clean(text)


_CEL_CLASS = r"\b(Int|Uint|Double|String|Bool|Bytes|List|Map|Timestamp|Duration)Type\b"


def _clean(text: str) -> str:
    # Never echo an activation (it holds every variable value) and speak CEL type names.
    text = re.sub(r"\s*\(in (?:activation|container) .*", "", text, flags=re.S)
    text = re.sub(_CEL_CLASS, lambda m: m[1].lower(), text.replace("<class 'celpy.celtypes.", "<"))
    return text if len(text) <= _MESSAGE_LIMIT else text[: _MESSAGE_LIMIT - 3] + "..."


def _to_python(value: Any, source: str) -> Any:
    runtime = _runtime()
    ct = runtime.celtypes
    if value is None or isinstance(value, ct.NullType):
        return None
    if isinstance(value, runtime.eval_error):
        # celpy's interpreter can leave an error inside a map literal instead of failing.
        raise CelInvalid(source, _eval_message(value, set()))
    if _is_bool(value):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bytes):
        return bytes(value)
    if isinstance(value, dt.datetime):
        plain = dt.datetime(
            value.year,
            value.month,
            value.day,
            value.hour,
            value.minute,
            value.second,
            value.microsecond,
            tzinfo=value.tzinfo,
        )
        return _utc(plain)
    if isinstance(value, dt.timedelta):
        return dt.timedelta(days=value.days, seconds=value.seconds, microseconds=value.microseconds)
    if isinstance(value, Mapping):
        return {_to_python(k, source): _to_python(v, source) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_python(item, source) for item in value]
    if isinstance(value, type):
        return _cel_type_name(value, ct)
    return value


def _cel_type_name(value: type, ct: Any) -> str:
    names = {
        ct.BoolType: "bool",
        ct.IntType: "int",
        ct.UintType: "uint",
        ct.DoubleType: "double",
        ct.StringType: "string",
        ct.BytesType: "bytes",
        ct.ListType: "list",
        ct.MapType: "map",
        ct.TimestampType: "timestamp",
        ct.DurationType: "duration",
        type(None): "null_type",
    }
    return names.get(value, getattr(value, "__name__", "type"))
