"""Import in the domain on moto's in-process backend: a file's labels are created together or
not at all, and a file holds no more labels than one transaction can create."""

from __future__ import annotations

import pytest

from etikett.domain.audit import audit_entries
from etikett.domain.labels import imports, label_versions, labels
from etikett.ids import new_id
from etikett.store import labels as label_store
from etikett_engine.errors import EtikettError
from unit.domain.callers import human, operations
from unit.domain.conftest import Aws


def _formats(count: int) -> bytes:
    return b"".join(
        b"^XA^PW400^LL200^FO10,10^A0N,20,20^FDLabel %d^FS^XZ\n" % index for index in range(count)
    )


def _all_labels() -> list[labels.Label]:
    return labels.list_labels(200, None, None).items


def test_every_label_of_a_file_is_created_with_its_audit_entry(empty: Aws) -> None:
    answer = imports.import_file(human("postImport", "designer"), "three.zpl", _formats(3), 203)
    assert [d.name for d in answer.documents] == ["three", "three (2)", "three (3)"]
    assert {label.id for label in _all_labels()} == {d.label_id for d in answer.documents}
    for document in answer.documents:
        assert operations(document.label_id) == ["postImport"]
        (version,) = label_versions.list_versions(document.label_id, "label", 10, None).items
        assert version.status == "draft"


def test_a_store_failure_on_the_second_label_creates_none(
    empty: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second label's id collides with a label that exists, so the store's condition that
    a new label is absent fails there: nothing of the file may remain, the other label is
    untouched."""
    existing = labels.create_blank(
        human("createLabel", "designer"), labels.NewLabel(name="Bestand")
    )
    issued: list[str] = []

    def colliding(prefix: str) -> str:
        if prefix != "lbl":
            return new_id(prefix)
        issued.append(existing.id if len(issued) == 1 else new_id(prefix))
        return issued[-1]

    monkeypatch.setattr(labels, "new_id", colliding)
    with pytest.raises(EtikettError) as refused:
        imports.import_file(human("postImport", "designer"), "three.zpl", _formats(3), 203)
    assert refused.value.status == 409
    assert len(issued) == 3 and issued[1] == existing.id
    assert [(label.id, label.name) for label in _all_labels()] == [(existing.id, "Bestand")]
    assert operations(existing.id) == ["createLabel"]
    assert [label_store.get_version(i, "label", 1) for i in issued] == [
        None,
        label_store.get_version(existing.id, "label", 1),
        None,
    ]
    kept = label_store.get_version(existing.id, "label", 1)
    assert kept is not None and label_store.unpack(kept.blob)["objects"] == []
    imported = audit_entries.list_entries(operation="postImport", limit=200, cursor=None).items
    assert [entry for entry in imported if entry.outcome == "success"] == []


def test_a_file_holds_at_most_the_labels_one_transaction_creates(empty: Aws) -> None:
    most = imports.MAX_LABELS_PER_IMPORT
    assert most * labels.WRITES_PER_LABEL <= 100  # DynamoDB's bound on one transaction
    answer = imports.import_file(human("postImport", "designer"), "f.zpl", _formats(most), 203)
    assert len(answer.documents) == most == len(_all_labels())
    with pytest.raises(EtikettError) as refused:
        imports.import_file(human("postImport", "designer"), "f.zpl", _formats(most + 1), 203)
    assert (refused.value.status, refused.value.code) == (422, "import.too_complex")
    assert refused.value.params["limit"] == most
    assert str(most) in refused.value.detail and "split" in refused.value.detail
    assert len(_all_labels()) == most


def test_labels_larger_together_than_one_transaction_are_refused(
    empty: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DynamoDB takes 4 MB per transaction; files that small cannot reach it with the default
    upload limit, so the bound is lowered to what two of these labels weigh."""
    one = imports.import_file(human("postImport", "designer"), "one.zpl", _formats(1), 203)
    stored = label_store.get_version(one.documents[0].label_id, "label", 1)
    assert stored is not None
    weight = len(stored.blob)
    monkeypatch.setattr(imports, "MAX_IMPORT_DOCUMENT_BYTES", 2 * weight + 1)
    with pytest.raises(EtikettError) as refused:
        imports.import_file(human("postImport", "designer"), "f.zpl", _formats(3), 203)
    assert (refused.value.status, refused.value.code) == (413, "import.too_large")
    assert refused.value.params["limit"] == 2 * weight + 1
    assert len(_all_labels()) == 1
