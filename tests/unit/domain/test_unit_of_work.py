"""The unit of work every domain change commits through: a change and its audit entry in one
transaction, and a failed condition reported as the error its write was given by name, whatever
order and kind of writes the change is made of."""

from __future__ import annotations

import pytest

from etikett import clock
from etikett.domain.audit import audit
from etikett.domain.labels import label_versions, labels
from etikett.store import labels as label_store
from etikett.store.conditions import ConditionName
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, EtikettError, NotFound, ProblemCode
from unit.domain.callers import human, operations

pytestmark = pytest.mark.usefixtures("aws")


def _label() -> label_store.LabelRecord:
    created = labels.create_blank(human("createLabel"), labels.NewLabel(name="uow"))
    record = label_store.get(created.id)
    assert record is not None
    return record


def test_the_failed_update_is_named_even_among_puts_added_after_it() -> None:
    """pynamodb sends puts before updates: the failed update must still be the one named."""
    record = _label()
    stale = record._replace(latest_version=7)  # the stored label is at version 1
    version = label_versions.new_version_record(
        human("patch"), record.id, "label", 8, {"size": {"width_mm": 10, "height_mm": 10}}, None
    )
    errors: dict[str, EtikettError] = {
        "version.latest": Conflict("latest moved", ProblemCode.DOCUMENT_VERSION_CONFLICT),
        "version.absent": NotFound("version exists", ProblemCode.LABEL_VERSION_NOT_FOUND),
    }
    entry = audit.record(human("patchLabelDocument"), record.id)
    with pytest.raises(EtikettError) as refused, UnitOfWork(entry, errors=errors) as uow:
        label_store.add_version(uow, stale, stale._replace(latest_version=8), version)
    assert refused.value.code == ProblemCode.DOCUMENT_VERSION_CONFLICT
    assert label_store.get_version(record.id, "label", 8) is None  # nothing was written
    assert operations(record.id) == ["createLabel"]


def test_the_failed_delete_is_named_among_updates_added_before_it() -> None:
    record, other = _label(), _label()
    labels.delete(human("deleteLabel"), other.id)
    errors: dict[str, EtikettError] = {
        "label.exists": NotFound("deleted meanwhile", ProblemCode.LABEL_NOT_FOUND),
        "version.status_unchanged": Conflict("moved", ProblemCode.DOCUMENT_VERSION_CONFLICT),
    }
    first = label_store.get_version(record.id, "label", 1)
    assert first is not None
    later = record._replace(name="renamed", updated_at=clock.now())
    with pytest.raises(EtikettError) as refused, UnitOfWork(errors=errors) as uow:
        label_store.set_version_status(uow, first, "approved", clock.now(), "x")  # passes
        label_store.update(uow, record, later)  # passes (`label.exists` too)
        label_store.delete(uow, other)  # fails: `label.exists`
    assert refused.value.code == ProblemCode.LABEL_NOT_FOUND
    assert label_store.get_version(record.id, "label", 1).status == "draft"  # type: ignore[union-attr]
    stored = label_store.get(record.id)
    assert stored is not None and stored.name == "uow"  # the update was not written either


def test_a_condition_failing_without_a_named_error_is_a_resource_conflict() -> None:
    record = _label()
    stale = record._replace(released_version=3)
    with pytest.raises(EtikettError) as refused, UnitOfWork() as uow:
        label_store.release(uow, stale, stale._replace(released_version=4), "label")
    assert refused.value.code == ProblemCode.RESOURCE_CONFLICT
    assert getattr(refused.value, "name", None) == ConditionName.LABEL_RELEASED_UNCHANGED


def test_no_stored_model_has_a_version_attribute() -> None:
    """The unit of work sends a transaction's requests itself (no pynamodb `TransactWrite`,
    which would add a version attribute's optimistic check): so no model may have one."""
    import importlib
    import pkgutil

    from pynamodb.attributes import VersionAttribute
    from pynamodb.models import Model

    import etikett.store

    for module in pkgutil.iter_modules(etikett.store.__path__):
        importlib.import_module(f"etikett.store.{module.name}")
    models: list[type[Model]] = []
    pending: list[type[Model]] = [Model]
    while pending:
        for subclass in pending.pop().__subclasses__():
            models.append(subclass)
            pending.append(subclass)
    stored = [m for m in models if m.__module__.startswith("etikett.store.")]
    assert len(stored) >= 10, stored
    versioned = [
        m.__name__
        for m in stored
        if any(isinstance(a, VersionAttribute) for a in m.get_attributes().values())
    ]
    assert versioned == []
