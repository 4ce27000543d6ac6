"""Paths a flow names on the Runner (a folder trigger's `path`, an `action.file` path): what
may never be in one, whatever the site allowed.

The service cannot know which folders a site allowed its Runner (its data folder, and the roots
its administrator named with `--watch-root`), so it refuses only what escapes on any machine: a
`..` segment, a drive or any `:` (also an NTFS stream), a network or device path, a NUL or other
control character, a leading `~`, a Windows device name. An absolute folder is not refused
here: the Runner decides at run time whether it lies inside its allowed roots (an `action.file`
path is relative to the data folder, so an absolute one is refused). The Runner may use this
check too; it is part of the engine it installs.
"""

from __future__ import annotations

import re
from typing import Any

from etikett_engine.dsl.flow import FlowDocument, FlowNode
from etikett_engine.flows.findings import Finding, pointer

# Windows opens these as devices in every folder, with any extension (`NUL.txt`, `com1.csv`).
_DEVICES = re.compile(r"^(CON|PRN|AUX|NUL|COM[0-9¹²³]|LPT[0-9¹²³]|CONIN\$|CONOUT\$)(\..*)?$", re.I)
_DRIVE = re.compile(r"^[A-Za-z]:")
_SEPARATORS = re.compile(r"[/\\]")


def refusal(path: str) -> str | None:
    """Why `path` may not be used on a Runner (a phrase to follow "The path has …"), or None."""
    if not path.strip():
        return "nothing but blanks"
    control = next((c for c in path if ord(c) < 32 or ord(c) == 127), None)
    if control is not None:
        return "a NUL byte" if control == "\0" else f"a control character (U+{ord(control):04X})"
    if re.match(r"^[/\\]{2}", path):
        return "a network or device path (\\\\server\\share, //server, \\\\?\\)"
    if _DRIVE.match(path):
        return f"a drive ({path[:2]}); name the folder without one"
    if ":" in path:
        return "a `:` (a drive, or an NTFS stream)"
    segments = _SEPARATORS.split(path)
    if segments[0].startswith("~"):
        return "a home folder (`~`)"
    for segment in segments:
        bare = segment.rstrip(". ")
        if segment == ".." or (not bare and segment.count(".") >= 2):
            # Windows drops trailing dots and spaces: `... ` and `.. ` are `..` there.
            return "a `..` segment (a path to a parent folder)"
        if _DEVICES.match(bare or segment):
            return f"a Windows device name ({segment})"
    return None


def findings(document: FlowDocument) -> list[Finding]:
    """`flow.path_refused` for every path of the document that `refusal` refuses."""
    return [
        found for index, node in enumerate(document.nodes) for found in node_findings(index, node)
    ]


def node_findings(index: int, node: FlowNode) -> list[Finding]:
    """A folder trigger's `path`; an `action.file` path when its CEL is a constant (no record,
    context or runner in it), as its value. Fields that do not fit their type are left to the
    field checks."""
    fields = node.fields()
    path: Any = fields.get("path")
    if not isinstance(path, str):
        return []
    if node.type == "trigger.folder":
        value: str | None = path
    elif node.type == "action.file":
        value = _constant(path)
    else:
        return []
    if value is None:
        return []
    why = refusal(value)
    if why is None and node.type == "action.file" and value[:1] in ("/", "\\"):
        # Files are written inside the data folder only: an absolute one never could be.
        why = "a leading `/` (an action.file path is relative to the Runner's data folder)"
    if why is None:
        return []
    shown = value if node.type == "trigger.folder" else f"{path} (= {value!r})"
    return [
        Finding(
            code="flow.path_refused",
            severity="error",
            path=pointer("nodes", index, "path"),
            node_id=node.id,
            message=f"The path {shown[:200]} has {why}. A Runner watches and writes only inside "
            "the folders its site allowed; name a folder inside them (an absolute one, or one "
            "relative to the Runner's data folder).",
            params={"value": value[:200], "reason": why},
        )
    ]


def _constant(source: str) -> str | None:
    """The text a CEL expression always gives (it reads nothing), or None."""
    # Loaded here, not at the flows and mcp functions' cold start.
    from etikett_engine.cel import CelInvalid, CelLimitExceeded, Expression
    from etikett_engine.cel.programs import TYPE_IDENTS

    try:
        expression = Expression(source)
        if expression.names - TYPE_IDENTS:
            return None
        value = expression.run({})
    except (CelInvalid, CelLimitExceeded):
        return None  # the CEL check reports it
    return value if isinstance(value, str) else None
