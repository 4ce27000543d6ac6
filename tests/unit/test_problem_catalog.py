"""Problem codes come from one catalog (`ProblemCode`), which the OpenAPI document publishes."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from etikett.api.problems import catalog
from etikett_engine.errors import ProblemCode

REPO = Path(__file__).resolve().parents[2]
# The service and the engine (whose problem_codes.py holds the catalog)
SOURCES = (REPO / "shared" / "etikett", REPO / "engine" / "etikett_engine")
CODE_LIKE = re.compile(r"^[a-z_]+\.[a-z_]+$")


def _string_codes() -> dict[str, str]:
    """Codes given as string literals where an error is raised or a problem answered."""
    found: dict[str, str] = {}
    for path in (path for source in SOURCES for path in source.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            callee = getattr(node, "func", None)
            name = getattr(callee, "id", None) or getattr(callee, "attr", "")
            # Lint findings (Finding(code=…)) are not problems: tests/unit/flows checks those.
            if not isinstance(node, ast.Call) or not name[:1].isupper() or name == "Finding":
                continue
            candidates = [kw.value for kw in node.keywords if kw.arg == "code"]
            if len(node.args) >= 2:
                candidates.append(node.args[1])
            for value in candidates:
                if isinstance(value, ast.Constant) and CODE_LIKE.match(str(value.value)):
                    found[str(value.value)] = f"{path}:{value.lineno}"
    return found


def test_errors_name_their_code_from_the_catalog() -> None:
    assert _string_codes() == {}


def test_every_catalogued_code_is_used() -> None:
    text = "\n".join(path.read_text() for source in SOURCES for path in source.rglob("*.py"))
    unused = [code.name for code in ProblemCode if f"ProblemCode.{code.name}" not in text]
    assert unused == []


def test_catalog_statuses_are_http_errors_and_published() -> None:
    assert all(400 <= code.status <= 599 for code in ProblemCode)
    published = catalog()
    assert published["label.not_found"] == {"status": 404, "meaning": "No label has this id."}
    assert set(published) == {str(code) for code in ProblemCode}
