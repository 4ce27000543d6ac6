"""Preflight of label versions: the findings a version shows, and the rule that a version with
error findings is neither approved nor printed (`label.has_errors`).

A version is laid out as its preview is (samples, defaults, the counters' next values). Versions
never change, so the findings of one are kept per process (by label and version); a print checks
its version once per warm process.
"""

from __future__ import annotations

from etikett_engine.dsl.label import LabelDocument
from etikett_engine.dsl.preflight import LabelFinding
from etikett_engine.errors import LabelHasErrors


def findings(label_id: str, version: int, document: LabelDocument) -> list[LabelFinding]:
    """The version's findings, laid out with the counters' next values when first asked in this
    process (a print does not read its counters twice; a counter's width rarely changes)."""
    key = (label_id, version)
    found = _KEPT.get(key)
    if found is None:
        # The renderer (Pillow, zint) loads with the first version laid out, not at a cold start.
        from etikett.domain.counters import counter_values
        from etikett_engine.render.preflight import preflight

        found = tuple(preflight(document, counters=counter_values.next_values(document)))
        if len(_KEPT) >= MAX_KEPT:
            _KEPT.pop(next(iter(_KEPT)))
        _KEPT[key] = found
    return list(found)


MAX_KEPT = 512
_KEPT: dict[tuple[str, int], tuple[LabelFinding, ...]] = {}


def ensure_no_errors(
    label_id: str, version: int, document: LabelDocument, *, doing: str
) -> list[LabelFinding]:
    """The version's findings; `label.has_errors` (422) when any is an error."""
    found = findings(label_id, version, document)
    errors = [finding for finding in found if finding.severity == "error"]
    if errors:
        first = errors[0]
        raise LabelHasErrors(
            f"Version {version} of {label_id} has {len(errors)} error finding(s) and cannot be "
            f"{doing}; first: {first.message}",
            label_id=label_id,
            version=version,
            findings=[error.model_dump(mode="json") for error in errors],
        )
    return found
