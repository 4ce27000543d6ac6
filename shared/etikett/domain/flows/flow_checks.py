"""Flow lint with the service's labels and secrets: the structural checks of
`etikett_engine.flows.lint` plus every `action.print`'s label reference, read from the labels
table (each label once per lint), and where `action.http` sends the secrets it names, read from
the credentials table."""

from __future__ import annotations

from etikett_engine.dsl.flow import FlowDocument
from etikett_engine.errors import NotFound
from etikett_engine.flows import lint as flow_lint
from etikett_engine.flows.findings import Finding
from etikett_engine.flows.lint import LabelFacts
from etikett_engine.flows.scope import Scope
from etikett_engine.flows.secret_origins import SecretFacts


class StoredLabels:
    """The labels table as lint's `LabelCatalog`, reading each (label, version) once."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, int | None], LabelFacts | None] = {}

    def facts(self, label_id: str, version: int | None) -> LabelFacts | None:
        key = (label_id, version)
        if key not in self._seen:
            self._seen[key] = _read(label_id, version)
        return self._seen[key]


def _read(label_id: str, version: int | None) -> LabelFacts | None:
    # Loaded here, not at the flows function's cold start.
    from etikett.domain.labels import label_records
    from etikett_engine.dsl.label import LabelDocument

    try:
        meta = label_records.load_label(label_id)
        number = version if version is not None else meta.released_version
        if number is None:
            return LabelFacts(label_id=label_id, version=None, approved=False)
        record = label_records.load_version(label_id, "label", int(number))
    except NotFound:
        return None
    document = LabelDocument.model_validate(record.document)
    entered = [v for v in document.variables if v.expression is None]
    return LabelFacts(
        label_id=label_id,
        version=int(number),
        approved=record.status == "approved",
        entered=frozenset(v.name for v in entered),
        required=frozenset(v.name for v in entered if v.required and v.default is None),
        computed=frozenset(v.name for v in document.variables if v.expression is not None),
    )


class StoredSecrets:
    """The credentials table as lint's `SecretCatalog` (each ref read once per lint; the value
    is never opened here)."""

    def __init__(self) -> None:
        self._seen: dict[str, SecretFacts | None] = {}

    def secret(self, ref: str) -> SecretFacts | None:
        if ref not in self._seen:
            # Only flows that send secrets ask: not loaded at the flows function's cold start.
            from etikett.store import credentials

            record = credentials.get(ref)
            self._seen[ref] = (
                SecretFacts(ref=ref, origins=record.origins)
                if record is not None and record.kind == "secret"
                else None
            )
        return self._seen[ref]


def lint(document: FlowDocument, scope: Scope | None = None) -> list[Finding]:
    return flow_lint.lint(document, StoredLabels(), StoredSecrets(), scope)
