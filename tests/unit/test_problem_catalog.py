"""Every problem code the code can raise is in the published catalog (x-etikett-problem-codes)."""

from __future__ import annotations

import ast
from pathlib import Path

from etikett.errors import PROBLEM_CODES

SOURCE = Path(__file__).resolve().parents[2] / "shared" / "etikett"


def _raised_codes() -> dict[str, str]:
    found: dict[str, str] = {}
    for path in SOURCE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            # class Foo(EtikettError): status, code, title = 404, "x.y", "…"  (or code, title = …)
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
                names = [
                    t.id for t in getattr(node.targets[0], "elts", []) if isinstance(t, ast.Name)
                ]
                if "code" in names:
                    value = node.value.elts[names.index("code")]
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        found[value.value] = str(path)
            # raise Something("detail", "x.y", …) or code="x.y"
            callee = getattr(node, "func", None)
            name = getattr(callee, "id", None) or getattr(callee, "attr", "")
            # Lint findings (Finding(code=…)) are not problems: tests/unit/flows checks those.
            if isinstance(node, ast.Call) and name[:1].isupper() and name != "Finding":
                candidates = [kw.value for kw in node.keywords if kw.arg == "code"]
                if len(node.args) >= 2 and isinstance(node.args[0], (ast.Constant, ast.JoinedStr)):
                    candidates.append(node.args[1])
                for value in candidates:
                    if (
                        isinstance(value, ast.Constant)
                        and isinstance(value.value, str)
                        and value.value.count(".") == 1
                        and value.value.islower()
                        and " " not in value.value
                    ):
                        found[value.value] = str(path)
    return found


def test_every_raised_code_is_catalogued() -> None:
    raised = _raised_codes()
    assert {"auth.forbidden", "document.invalid", "user.not_found"} <= set(raised)
    missing = {code: where for code, where in raised.items() if code not in PROBLEM_CODES}
    assert missing == {}


def test_catalog_statuses_are_http_errors() -> None:
    assert all(400 <= status <= 599 for status, _ in PROBLEM_CODES.values())
