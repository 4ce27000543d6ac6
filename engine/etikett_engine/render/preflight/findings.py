"""A preflight finding as the catalog describes its code, and findings in the order they are
reported: errors first, then by where they point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from etikett_engine.dsl.preflight import LABEL_FINDING_CODES, LabelFinding
from etikett_engine.render.units import MM_PER_INCH


def label_finding(
    code: str,
    path: str,
    object_id: str | None,
    message: str,
    extra: Mapping[str, Any] | None = None,
    **params: Any,
) -> LabelFinding:
    severity, _ = LABEL_FINDING_CODES[code]
    params = {**(extra or {}), **params}
    return LabelFinding(
        code=code,
        severity=severity,
        path=path,
        object_id=object_id,
        message=message,
        params={k: v for k, v in params.items() if v is not None},
    )


def dots_to_mm(dots: int, dpi: int) -> float:
    return round(dots * MM_PER_INCH / dpi, 2)


def ordered(findings: list[LabelFinding]) -> list[LabelFinding]:
    """Errors first, then by where they point (stable within a path)."""
    return sorted(findings, key=lambda f: (f.severity != "error", _path_key(f.path)))


def _path_key(path: str) -> tuple[Any, ...]:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in path.split("/")[1:])
