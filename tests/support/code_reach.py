"""What a Lambda function's code can reach, read from the source without importing it: a call
graph of the `etikett` package by top-level definition (function, class, module-level name),
from the function's entry (`functions/<group>/app.py`) and its group's routes, and the settings
naming AWS resources (tables, queues, buckets, keys) that the reached code uses.

A repository module of `etikett.store` counts whole once any function of it is reached (it is
one aggregate's storage: its table, its bucket); elsewhere only the definitions reached count
(the domain opens the credentials key only where it opens a credential). Annotations and
docstrings are not code; imports under `if TYPE_CHECKING:` are not run, but a package's lazily
loaded names (PEP 562, named there) resolve through them. Calls through values (a method of an
object) reach whatever defined the object's class, since a class counts with all its methods.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

Key = tuple[str, ...]  # ("mod", module) or ("def", module, top-level name)
Target = str | tuple[str, str]  # what an import binds: a module, or (module, name)
STORE = "etikett.store."


@dataclass
class Module:
    name: str
    tree: ast.Module
    package: bool
    top: dict[str, ast.AST] = field(default_factory=dict)
    bindings: dict[str, Target] = field(default_factory=dict)
    lazy: dict[str, Target] = field(default_factory=dict)
    runs: list[ast.stmt] = field(default_factory=list)  # what importing it runs, but definitions


class Code:
    """Every module of the `etikett` package under `root` (shared/), parsed once."""

    def __init__(self, root: Path, settings: Iterable[str]) -> None:
        self.settings = frozenset(settings)
        self.modules: dict[str, Module] = {}
        for path in sorted((root / "etikett").rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if package else parts)
            self.add(name, ast.parse(path.read_text(encoding="utf-8")), package=package)

    def add(self, name: str, tree: ast.Module, *, package: bool = False) -> Module:
        module = Module(name, tree, package)
        for statement in tree.body:
            if _is_type_checking(statement):
                assert isinstance(statement, ast.If)
                for inner in statement.body:
                    self._bind(module, inner, module.lazy)
                continue
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                module.top[statement.name] = statement
            elif isinstance(statement, ast.Assign | ast.AnnAssign):
                targets = (
                    statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                )
                names = [t.id for t in targets if isinstance(t, ast.Name)]
                for target_name in names:
                    module.top[target_name] = statement
                if not names:
                    module.runs.append(statement)
            elif isinstance(statement, ast.Import | ast.ImportFrom):
                self._bind(module, statement, module.bindings)
                module.runs.append(statement)
            else:
                module.runs.append(statement)
        self.modules[name] = module
        return module

    def _bind(self, module: Module, statement: ast.stmt, into: dict[str, Target]) -> None:
        for name, target in self.imported(module, statement):
            into[name] = target

    def imported(self, module: Module, statement: ast.AST) -> Iterator[tuple[str, Target]]:
        """(bound name, module or (module, name)) of an import statement."""
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    yield alias.asname, alias.name
                else:
                    yield alias.name.split(".")[0], alias.name.split(".")[0]
        elif isinstance(statement, ast.ImportFrom):
            base = statement.module or ""
            if statement.level:
                parts = module.name.split(".")
                parts = parts if module.package else parts[:-1]
                parts = parts[: len(parts) - (statement.level - 1)]
                base = ".".join([*parts, *([statement.module] if statement.module else [])])
            for alias in statement.names:
                sub = f"{base}.{alias.name}"
                yield alias.asname or alias.name, sub if sub in self.modules else (base, alias.name)

    # --- resolving names ----------------------------------------------------------------------

    def lookup(self, module_name: str, name: str, seen: frozenset[str] = frozenset()) -> Key | None:
        """What `name` is in module `module_name`: one of its definitions, what it imported
        under that name (also lazily, for a package), or a submodule."""
        module = self.modules.get(module_name)
        if module is None or f"{module_name}:{name}" in seen:
            return None
        seen = seen | {f"{module_name}:{name}"}
        if name in module.top:
            return ("def", module_name, name)
        for table in (module.bindings, module.lazy):
            if name in table:
                return self.target(table[name], seen)
        if f"{module_name}.{name}" in self.modules:
            return ("mod", f"{module_name}.{name}")
        return None

    def target(self, target: Target, seen: frozenset[str] = frozenset()) -> Key | None:
        if isinstance(target, str):
            return ("mod", target) if target in self.modules else None
        return self.lookup(target[0], target[1], seen)

    # --- walking -------------------------------------------------------------------------------

    def body(self, key: Key) -> list[ast.AST]:
        module = self.modules[key[1]]
        if key[0] == "mod":
            return list(module.runs)
        return [module.top[key[2]]]

    def edges(self, module_name: str, nodes: list[ast.AST]) -> tuple[set[Key], set[str]]:
        """What `nodes` (of `module_name`) reference, and the resource settings they name."""
        module = self.modules[module_name]
        local: dict[str, Target] = {}
        keys: set[Key] = set()
        used: set[str] = set()
        code = [inner for node in nodes for inner in _code(node)]
        for inner in code:  # local imports first: they bind names for the whole definition
            if isinstance(inner, ast.Import | ast.ImportFrom):
                for name, target in self.imported(module, inner):
                    local[name] = target
                    resolved = self.target(target)
                    if resolved is not None:
                        keys.add(resolved)
                for imported in _modules_of(module, inner, self.modules):
                    keys.add(("mod", imported))
        for inner in code:
            if isinstance(inner, ast.Constant) and isinstance(inner.value, str):
                if inner.value in self.settings:
                    used.add(inner.value)
            elif isinstance(inner, ast.Attribute):
                if inner.attr in self.settings:
                    used.add(inner.attr)
                keys.update(self._attribute(module_name, inner, local))
            elif isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Load):
                resolved = (
                    self.target(local[inner.id])
                    if inner.id in local
                    else self.lookup(module_name, inner.id)
                )
                if resolved is not None:
                    keys.add(resolved)
        return keys, used

    def _attribute(
        self, module_name: str, node: ast.Attribute, local: dict[str, Target]
    ) -> Iterator[Key]:
        chain: list[str] = []
        root: ast.AST = node
        while isinstance(root, ast.Attribute):
            chain.insert(0, root.attr)
            root = root.value
        if not isinstance(root, ast.Name):
            return
        current = (
            self.target(local[root.id]) if root.id in local else self.lookup(module_name, root.id)
        )
        for attr in chain:
            if current is None or current[0] != "mod":
                return
            current = self.lookup(current[1], attr)
            if current is not None:
                yield current

    def reach(self, roots: Iterable[Key]) -> dict[str, list[str]]:
        """Resource setting -> how the first of `roots` to reach it gets there (a chain of
        definitions, module:name), for every setting they reach."""
        came: dict[Key, Key | None] = {}
        pending: list[tuple[Key, Key | None]] = [(root, None) for root in roots]
        uses: dict[str, Key] = {}
        clients: set[Key] = set()  # the first function reached of each client-only repository
        while pending:
            key, parent = pending.pop(0)
            if key in came or key[1] not in self.modules:
                continue
            came[key] = parent
            if key[0] == "def" and self._client_only(key[1]):
                node = self.modules[key[1]].top[key[2]]
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    clients.add(key)
            keys, used = self.edges(key[1], self.body(key))
            for setting in used:
                uses.setdefault(setting, key)
            pending.extend((found, key) for found in sorted(keys) if found not in came)
        for key in sorted(clients):
            module = self.modules[key[1]]
            nodes = list(module.top.values()) + list(module.runs)
            for setting in self.edges(key[1], nodes)[1]:
                uses.setdefault(setting, key)
        return {setting: self._chain(came, key) for setting, key in uses.items()}

    def _client_only(self, name: str) -> bool:
        """A repository without tables of its own (a queue's, a bucket's, a key's client): it
        counts whole once any of its functions is reached, since they take the resource by
        value (a Runner's queue URL, say) where a table's items name their table themselves."""
        module = self.modules[name]
        return name.startswith(STORE) and "table_meta" not in ast.unparse(module.tree)

    @staticmethod
    def _chain(came: dict[Key, Key | None], key: Key) -> list[str]:
        chain: list[str] = []
        current: Key | None = key
        while current is not None:
            chain.insert(0, ":".join(current[1:]))
            current = came.get(current)
        return chain


def _is_type_checking(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.If) and "TYPE_CHECKING" in ast.unparse(statement.test)


def _modules_of(module: Module, statement: ast.AST, modules: dict[str, Module]) -> Iterator[str]:
    """The modules an import statement runs (and the packages above them)."""
    names: list[str] = []
    if isinstance(statement, ast.Import):
        names = [alias.name for alias in statement.names]
    elif isinstance(statement, ast.ImportFrom) and not statement.level:
        names = [statement.module or ""]
        names += [f"{statement.module}.{alias.name}" for alias in statement.names]
    for name in names:
        parts = name.split(".")
        for end in range(1, len(parts) + 1):
            if ".".join(parts[:end]) in modules:
                yield ".".join(parts[:end])


def _code(node: ast.AST) -> Iterator[ast.AST]:
    """Every node of `node` that runs: not annotations, not docstrings, not what an
    `if TYPE_CHECKING:` guards."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, ast.stmt) and _is_type_checking(current):
            continue
        yield current
        for name, value in ast.iter_fields(current):
            if name in ("annotation", "returns"):
                continue
            items = value if isinstance(value, list) else [value]
            for index, item in enumerate(items):
                if not isinstance(item, ast.AST):
                    continue
                if (
                    name == "body"
                    and index == 0
                    and isinstance(
                        current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module
                    )
                    and isinstance(item, ast.Expr)
                    and isinstance(item.value, ast.Constant)
                    and isinstance(item.value.value, str)
                ):
                    continue  # a docstring
                stack.append(item)
