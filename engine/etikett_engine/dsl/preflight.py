"""Preflight findings of a label version: their shape (the one flow lint uses) and their codes.

A finding points into the document with a JSON Pointer and names the object it is about. Errors
stop a version from being approved or printed (`label.has_errors`); warnings only inform.
`etikett_engine.render.preflight` computes them.
"""

from typing import Any, Literal

from pydantic import Field

from etikett_engine.model import Model

Severity = Literal["error", "warning"]


class LabelFinding(Model):
    code: str = Field(
        description="Stable code, e.g. `label.barcode_clipped`.", examples=["label.barcode_clipped"]
    )
    severity: Severity
    path: str = Field(description="JSON Pointer into the document.", examples=["/objects/4"])
    object_id: str | None = Field(default=None, description="The object it is about, if any.")
    message: str
    params: dict[str, Any] = Field(default_factory=dict)


# Every code preflight can report, with its severity: docs/concepts/labels.md and the OpenAPI
# descriptions.
LABEL_FINDING_CODES: dict[str, tuple[Severity, str]] = {
    "label.object_outside": (
        "error",
        "An object prints (partly) outside the label: the printer cuts those dots off.",
    ),
    "label.barcode_clipped": ("error", "A barcode runs past the label's edge and cannot scan."),
    "label.barcode_quiet_zone": (
        "error",
        "A barcode's quiet zone (10 modules beside linear codes, EAN-13 11/7, UPC-A 9/9; QR 4, "
        "Data Matrix 1, PDF417 2 around) has other ink in it (error) or runs off the label "
        "(warning).",
    ),
    "label.module_too_narrow": (
        "error",
        "A barcode module is narrower than one printer dot at the label's density (error), or "
        "exactly one dot, which thermal heads print unevenly (warning).",
    ),
    "label.barcode_invalid": ("error", "A barcode's literal content cannot be encoded."),
    "label.text_overflow": (
        "error",
        "Text does not fit its box: lines wider or taller than the box, or cut by max_lines.",
    ),
    "label.font_unknown": ("error", "A text's font cannot be loaded at its weight."),
    "label.cel_invalid": ("error", "An expression does not compile."),
    "label.variable_undeclared": ("error", "An expression names a variable that is not declared."),
    "label.variable_unused": ("warning", "A declared variable is used by no expression."),
    "label.sample_failed": (
        "warning",
        "With its samples and defaults the object's value cannot be computed or encoded, so "
        "its geometry is not checked (give the variables samples).",
    ),
}


def pointer(*parts: Any) -> str:
    """A JSON Pointer from its reference tokens (escaping `~` and `/`)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def has_errors(findings: list[LabelFinding]) -> bool:
    return any(f.severity == "error" for f in findings)
