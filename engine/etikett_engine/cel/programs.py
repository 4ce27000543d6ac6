"""Compiled CEL programs: each expression parsed, checked against the limits and transpiled to
Python once (celpy's compiled mode, about five times faster than its interpreter), with the
names and functions it refers to, then run in its own namespace per evaluation, so threads can
share the compiled expressions.

celpy's parser takes about 0.3 s to build: it is built on the first compile only (`runtime()`).
"""

from __future__ import annotations

import functools
import os
import re
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, cast

from etikett_engine.cel import charged, conversions, limits, parser_tables
from etikett_engine.cel.errors import CelInvalid, CelLimitExceeded, parse_message
from etikett_engine.cel.helpers import HELPERS
from etikett_engine.cel.library import celpy

# Names usable as values besides variables: CEL's type names (`type(x) == int`).
TYPE_IDENTS = frozenset({"bool", "bytes", "double", "duration", "int", "list", "map"})
TYPE_IDENTS |= {"null_type", "string", "timestamp", "type", "uint"}
# Macros bind their first argument(s) as a local name; `reduce` binds two.
_MACROS = {"map": 1, "filter": 1, "all": 1, "exists": 1, "exists_one": 1, "reduce": 2}
_IDENT = r"[_a-zA-Z][_a-zA-Z0-9]*"
# celpy 0.5's transpiler leaves has() a Python bool, which `?:` and `!` then refuse; wrap it.
_HAS_LAMBDA = (
    r"lambda activation: (not isinstance\(celpy\.evaluation\.result\(activation, ex_\d+_h\), "
    r"CELEvalError\))"
)


class Runtime:
    """celpy's environment and the activation expressions run in, built once per process."""

    def __init__(self) -> None:
        loaded = celpy()
        self.celpy: Any = loaded.celpy
        self.eval_error = loaded.eval_error
        evaluation = loaded.celpy.evaluation
        # The CompiledRunner's parser makes the trees the transpiler needs (celpy shares one
        # parser per process, shaped by the first Environment; see _compile for the other case).
        parser_tables.install(self.celpy.CompiledRunner.tree_node_class)
        self.environment: Any = self.celpy.Environment(runner_class=self.celpy.CompiledRunner)
        # celpy's operations that build or scan values, charged to the evaluation's budget, and
        # the label helpers (which charge too).
        self.base_activation: Any = evaluation.Activation(
            functions={**charged.functions(), **HELPERS}
        )
        # What transpiled code calls: the same, and `int(…)` as
        # etikett_engine.cel.conversions.int_of.
        # Only for transpiling: the activation expressions run in keeps `int` celpy's type.
        self.transpile_activation: Any = evaluation.Activation(
            functions={**charged.functions(), **HELPERS, **conversions.functions()}
        )
        # Transpiled code calls functions by module path (etikett_engine.cel.helpers._pad) and
        # celpy's own by celpy.evaluation's globals; each evaluation runs in its own copy
        # (Program.run).
        self.globals: dict[str, Any] = dict(vars(evaluation))
        self.globals["etikett_engine"] = sys.modules["etikett_engine"]
        builtin = {name for name in evaluation.base_functions if re.fullmatch(_IDENT, name)}
        self.functions = frozenset(builtin | set(HELPERS) | {"has", "dyn"})


_RUNTIME: Runtime | None = None
_RUNTIME_LOCK = threading.Lock()
# The transpiler decorates the parse tree in place; one compile at a time (each is done once).
_COMPILE_LOCK = threading.Lock()


def _after_fork() -> None:
    """A forked child (the print renderer's helper processes) starts with free locks: a thread
    that held one at the fork is not there."""
    global _RUNTIME_LOCK, _COMPILE_LOCK
    _RUNTIME_LOCK, _COMPILE_LOCK = threading.Lock(), threading.Lock()


os.register_at_fork(after_in_child=_after_fork)


def runtime() -> Runtime:
    global _RUNTIME
    built = _RUNTIME
    if built is None:
        with _RUNTIME_LOCK:
            if _RUNTIME is None:
                _RUNTIME = Runtime()
            built = _RUNTIME
    return built


class Reference:
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
        return getattr(runtime().base_activation, name)


class Bindings(dict[str, Any]):
    """Values bound once for several expressions (a flow node's): the activation macro-free
    code reads them from is made once, not per evaluation. Not changed once made."""

    __slots__ = ("activation",)

    def __init__(self, values: Mapping[str, Any]) -> None:
        super().__init__(values)
        self.activation = _Bound(self)


class Program:
    """One compiled expression: runnable code, the free names it reads, its problems."""

    __slots__ = ("code", "function", "names", "problems", "tree")

    def __init__(self, tree: Any, code: Any, problems: tuple[Reference, ...]) -> None:
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
        """The celpy result, or celpy's evaluation error raised."""
        built = runtime()
        if self.function is not None:
            bound = values.activation if type(values) is Bindings else _Bound(values)
            result = self.function(bound)
            if isinstance(result, built.eval_error):
                raise result
            return result
        if self.code is None:
            evaluator = charged.evaluator(self.tree, built.base_activation)
            return evaluator.evaluate(values)
        activation = built.base_activation.clone()
        activation.identifiers.load_values(values)
        # celpy's own CompiledRunner puts the activation into celpy.evaluation's module globals,
        # which races between threads; a private copy of those globals per evaluation does not.
        namespace = dict(built.globals)
        namespace["base_activation"] = activation
        exec(self.code, namespace)
        result = namespace["CEL"]
        if isinstance(result, built.eval_error):
            raise result
        return result


def program(source: str) -> Program:
    """The compiled expression; CelInvalid (or CelLimitExceeded) when it cannot be one."""
    if not isinstance(source, str):
        raise TypeError("a CEL expression is a string")
    try:
        limits.check_source(source)  # before parsing: parsing is what it would cost
    except limits.Exceeded as exceeded:
        raise CelLimitExceeded.of(source, exceeded) from None
    compiled = _compile(source)
    if isinstance(compiled, CelLimitExceeded):
        raise CelLimitExceeded(source, compiled.params["message"], compiled.params["limit"])
    if isinstance(compiled, CelInvalid):
        raise CelInvalid(**compiled.params)  # a fresh exception each time: tracebacks differ
    return compiled


@functools.lru_cache(maxsize=1024)
def _compile(source: str) -> Program | CelInvalid:
    """Parse and transpile once per source; a failure is cached as the CelInvalid to raise."""
    built = runtime()
    library = built.celpy
    try:
        with _COMPILE_LOCK:
            tree = built.environment.compile(source)
            limits.check_depth(macro_depth(tree))
            problems = _references(tree, built.functions)
            code = _transpile(tree, built) if isinstance(tree, library.TranspilerTree) else None
            # A plain tree means another part of the process built celpy's shared parser for
            # the interpreter first: such trees can only be interpreted (slower, same results).
    except library.CELParseError as ex:
        return CelInvalid(source, parse_message(ex), ex.line, ex.column)
    except RecursionError:
        return CelInvalid(source, "the expression is nested too deeply")
    except limits.Exceeded as exceeded:
        return CelLimitExceeded.of(source, exceeded)
    return Program(tree, code, problems)


def _transpile(tree: Any, built: Runtime) -> Any:
    try:
        transpiler = built.celpy.Transpiler(ast=tree, activation=built.transpile_activation)
        transpiler.transpile()
    except RecursionError:
        raise
    except Exception:
        # The transpiler gives up on some malformed macros ([1].map(1, 2)); check() reports
        # them, and the interpreter turns them into evaluation errors.
        return None
    text = _outside_strings(transpiler.source_text, _rewritten)
    try:
        code = compile(text, "<cel>", "exec")
        if "macro_" in text or "activation.resolve" in text:
            return code
        text, constants = _int_literals(text, built.celpy.celtypes)
        body = "".join(f"    {line}\n" for line in text.splitlines())
        namespace = dict(built.globals)
        namespace.update(constants)
        exec(
            compile(f"def _cel(base_activation):\n{body}    return CEL\n", "<cel>", "exec"),
            namespace,
        )
        return code, namespace["_cel"]
    except (SyntaxError, MemoryError) as ex:
        # Python's own parser stops at 200 nested parentheses ("too many nested parentheses").
        raise RecursionError from ex


def _rewritten(code: str) -> str:
    """Transpiled code (never a string literal's content) as it runs here."""
    code = re.sub(_HAS_LAMBDA, r"lambda activation: celpy.celtypes.BoolType(\1)", code)
    # Comprehensions call celpy directly, not through the activation: charge their steps.
    return code.replace("celpy.evaluation.macro_", f"{charged.__name__}.macro_")


def _outside_strings(text: str, rewrite: Callable[[str], str]) -> str:
    """`text` with `rewrite` applied to the code between its string literals, so that a CEL
    string which happens to read like transpiled code keeps its value."""
    import io  # here, not at the top: compiles are rare, cold starts are not
    import tokenize

    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    parts: list[str] = []
    done = 0
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type != tokenize.STRING:
            continue
        begin = starts[token.start[0] - 1] + token.start[1]
        end = starts[token.end[0] - 1] + token.end[1]
        parts += [rewrite(text[done:begin]), text[begin:end]]
        done = end
    parts.append(rewrite(text[done:]))
    return "".join(parts)


_INT_LITERAL = ("celpy", ".", "celtypes", ".", "IntType", "(", None, ")")


def _int_literals(text: str, celtypes: Any) -> tuple[str, dict[str, Any]]:
    """The transpiled code with each int literal (`celpy.celtypes.IntType(0)`) made once, as a
    constant of its namespace: celpy's IntType wraps a fresh range-checking closure on every
    call. Found as Python tokens, so never inside a string; a literal out of range is left to
    fail when it is evaluated, as before."""
    import ast  # here, not at the top: compiles are rare, cold starts are not
    import io
    import tokenize

    tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)]
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    spans: list[tuple[int, int, str]] = []
    constants: dict[str, Any] = {}
    for index in range(len(tokens) - len(_INT_LITERAL) + 1):
        window = tokens[index : index + len(_INT_LITERAL)]
        if any(
            want is not None and token.string != want
            for token, want in zip(window, _INT_LITERAL, strict=True)
        ):
            continue
        if window[6].type != tokenize.NUMBER or (index and tokens[index - 1].string == "."):
            continue
        try:
            value = celtypes.IntType(ast.literal_eval(window[6].string))
        except (ValueError, SyntaxError):
            continue
        name = f"_cel_int_{len(constants)}"
        constants[name] = value
        (first_row, first_col), (last_row, last_col) = window[0].start, window[-1].end
        spans.append((starts[first_row - 1] + first_col, starts[last_row - 1] + last_col, name))
    for begin, end, name in reversed(spans):
        text = text[:begin] + name + text[end:]
    return text, constants


def _references(tree: Any, functions: frozenset[str]) -> tuple[Reference, ...]:
    """Free variable names (not bound by a macro), unknown functions and bad macro variables,
    in source order."""
    from lark import Tree  # with the first compile, as celpy (see library.py)

    found: list[Reference] = []
    # An explicit stack: CEL trees are deep (every precedence level nests), recursion is not.
    stack: list[tuple[Any, frozenset[str]]] = [(tree, frozenset())]
    while stack:
        node, bound = stack.pop()
        if not isinstance(node, Tree):
            continue
        kind, children = node.data, cast(list[Any], node.children)
        if kind in ("ident", "dot_ident"):
            if children[0].value not in bound:
                found.append(Reference("name", children[0]))
        elif kind in ("ident_arg", "dot_ident_arg"):
            if children[0].value not in functions:
                found.append(Reference("function", children[0]))
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
                        found.append(Reference("macro_variable", method))
                    else:
                        local.add(token.value)
                stack.extend((arg, frozenset(local)) for arg in args[binds:])
            else:
                if method.value not in functions and method.value != "min":
                    found.append(Reference("function", method))
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


def macro_depth(tree: Any) -> int:
    """How deeply comprehension macros nest in a parsed expression."""
    from lark import Tree  # with the first compile, as celpy (see library.py)

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
