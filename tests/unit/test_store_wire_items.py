"""The store writes the items of bulk writes (jobs, events, audit and archive entries) without
building their pynamodb models (store.wire_items): the same items and the same transaction puts,
byte for byte and in the same order, as the models give, for every kind of attribute they hold."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from pynamodb.attributes import UnicodeAttribute, UnicodeSetAttribute
from pynamodb.exceptions import AttributeNullError
from pynamodb.expressions.condition import Condition
from pynamodb.models import Model

from etikett.store import archive, audit_table, events, jobs, wire_items
from etikett.store.archive import ArchiveRecord
from etikett.store.audit_table import AuditRecord
from etikett.store.base import item_of, record_of, values_of
from etikett.store.events import EventRecord
from etikett.store.jobs import JobMessage, JobRecord

UTC = dt.UTC
AT = dt.datetime(2026, 11, 28, 11, 5, 7, 123000, tzinfo=UTC)
# Another zone: the stored time is UTC either way.
ELSEWHERE = dt.datetime(2026, 11, 28, 12, 5, 7, 1000, tzinfo=dt.timezone(dt.timedelta(hours=1)))

# Every kind of value an unschemed map (an event's data, an audit entry's details) holds.
EVERY_VALUE: dict[str, Any] = {
    "text": "Größe ✓",
    "empty": "",
    "count": 12,
    "negative": -3,
    "ratio": 0.25,
    "yes": True,
    "no": False,
    "nothing": None,
    "list": [1, "zwei", None, {"drei": 3.5}, [], {}],
    "empty_list": [],
    "map": {"printer": {"name": "Line 1", "dpi": 203}, "serials": {"lot": [1, 2]}},
    "empty_map": {},
    "names": {"a", "b"},
    "bytes": b"\x00\xff",
}

JOB = JobRecord(
    id="job_01JDQ5",
    kind="print",
    status="sent",
    runner_id="run_1",
    printer_id="prn_1",
    payload={"label_id": "lbl_1", "printer": {"name": "Line 1"}, "labels": 1, "ratio": 0.5},
    messages=(
        JobMessage(at=AT, level="info", text="Printed offline; synced now."),
        JobMessage(at=ELSEWHERE, level="warning", text="Größe ✓"),
    ),
    outcome="sent",
    outcome_reason="ok",
    outcome_at=AT,
    result={"pages": [1, 2], "ok": True},
    attempts=1,
    created_at=AT,
    created_by="runner:hall",
    updated_at=ELSEWHERE,
    finished_at=AT,
    receipt="r-1",
    receipt_at=AT,
)
SPARSE_JOB = JOB._replace(
    printer_id=None,
    messages=(),
    outcome=None,
    outcome_reason=None,
    outcome_at=None,
    result=None,
    attempts=0,
    finished_at=None,
    receipt=None,
    receipt_at=None,
)
EVENT = EventRecord(id="evt_1", kind="print.sent", at=AT, subject_id="job_1", data=EVERY_VALUE)
AUDIT = AuditRecord(
    id="aud_1",
    at=AT,
    actor="service",
    subject="runner:hall",
    operation_id="postRunnerOfflinePrints",
    target_id="job_1",
    outcome="success",
    code=None,
    request_id="req-1",
    details=EVERY_VALUE,
)
ENTRY = ArchiveRecord(
    id="arc_1",
    job_id="job_1",
    record_index=0,
    label_id="lbl_1",
    label_version=3,
    printer="Line 1",
    printer_id="prn_1",
    copies=2,
    variables={"name": "Größe", "weight": 1.5, "items": [1, None, "x"]},
    serials={"lot": "000001"},
    actor="service",
    subject="runner:hall",
    created_at=AT,
)
OFFLINE_ENTRY = ENTRY._replace(printed_offline=True, printed_at=ELSEWHERE, flag="offline")

JOB_MODEL: Any = vars(jobs)["_JobItem"]
JOB_VALUES: Any = vars(jobs)["_values"]
EVENT_MODEL: Any = vars(events)["_EventItem"]
ARCHIVE_MODEL: Any = vars(archive)["_ArchiveItem"]

CASES: list[tuple[str, type[Model], dict[str, Any]]] = [
    ("job", JOB_MODEL, JOB_VALUES(JOB)),
    ("sparse job", JOB_MODEL, JOB_VALUES(SPARSE_JOB)),
    ("job, defaults", JOB_MODEL, {k: v for k, v in JOB_VALUES(JOB).items() if k != "attempts"}),
    ("event", EVENT_MODEL, values_of(EVENT, stream=events.STREAM)),
    ("event, stream by default", EVENT_MODEL, values_of(EVENT)),
    ("audit", audit_table.AuditItem, values_of(AUDIT, stream=audit_table.STREAM)),
    ("audit, no details", audit_table.AuditItem, values_of(AUDIT._replace(details=None))),
    ("archive entry", ARCHIVE_MODEL, values_of(ENTRY, stream=archive.STREAM)),
    ("offline archive entry", ARCHIVE_MODEL, values_of(OFFLINE_ENTRY, stream=archive.STREAM)),
]


def _exactly(value: Any) -> str:
    """`value` as text that differs if anything differs, the order of keys included."""
    return json.dumps(value, default=repr, ensure_ascii=False)


@pytest.mark.parametrize(
    ("model", "values"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
def test_an_item_is_what_its_model_serializes(model: type[Model], values: dict[str, Any]) -> None:
    assert _exactly(wire_items.item(model, values)) == _exactly(model(**values).serialize())


CONDITIONS: list[Condition | None] = [
    None,
    JOB_MODEL.id.does_not_exist(),
    (JOB_MODEL.status == "sent") & JOB_MODEL.outcome.is_in("sent", "failed"),
]


@pytest.mark.parametrize("condition", CONDITIONS, ids=["none", "absent", "with values"])
@pytest.mark.parametrize(
    ("model", "values"), [case[1:] for case in CASES], ids=[c[0] for c in CASES]
)
def test_a_put_is_what_pynamodb_sends(
    model: type[Model], values: dict[str, Any], condition: Condition | None
) -> None:
    if condition is not None and model is not JOB_MODEL:
        condition = model.id.does_not_exist()  # type: ignore[attr-defined]
    expected = model(**values).get_save_kwargs_from_instance(condition=condition)
    assert _exactly(wire_items.put(model, values, condition)) == _exactly(expected)


@pytest.mark.parametrize("condition", CONDITIONS[1:], ids=["absent", "with values"])
def test_a_condition_prepared_once_is_sent_as_made_each_time(condition: Condition) -> None:
    values = JOB_VALUES(JOB)
    prepared = wire_items.prepared(condition)
    for _ in range(2):
        once = wire_items.put(JOB_MODEL, values, prepared)
        assert _exactly(once) == _exactly(wire_items.put(JOB_MODEL, values, condition))
    assert _exactly(once) == _exactly(
        JOB_MODEL(**values).get_save_kwargs_from_instance(condition=condition)
    )
    once["ExpressionAttributeNames"]["#changed"] = "by a caller"
    assert "#changed" not in wire_items.put(JOB_MODEL, values, prepared)["ExpressionAttributeNames"]


def test_the_table_is_the_one_the_model_is_aimed_at_now(monkeypatch: pytest.MonkeyPatch) -> None:
    values = values_of(EVENT)
    wire_items.put(EVENT_MODEL, values)  # the model's shape is worked out once
    monkeypatch.setattr(EVENT_MODEL.Meta, "table_name", "events-elsewhere")
    assert wire_items.put(EVENT_MODEL, values)["TableName"] == "events-elsewhere"


def test_a_missing_value_is_refused_as_by_the_model() -> None:
    values = JOB_VALUES(JOB._replace(status=None))
    with pytest.raises(AttributeNullError):
        JOB_MODEL(**values).serialize()
    with pytest.raises(AttributeNullError):
        wire_items.item(JOB_MODEL, values)


def test_an_unknown_attribute_is_refused() -> None:
    values = {**values_of(EVENT), "colour": "red"}
    with pytest.raises(ValueError, match="colour"):
        EVENT_MODEL(**values)
    with pytest.raises(ValueError, match="colour"):
        wire_items.item(EVENT_MODEL, values)


class _WithSet(Model):
    class Meta:
        table_name = "with-set"

    id = UnicodeAttribute(hash_key=True)
    names = UnicodeSetAttribute()


def test_a_model_with_an_attribute_it_does_not_know_is_refused() -> None:
    # A set attribute's descriptor turns what it is given into a set: not written as given.
    with pytest.raises(TypeError, match="UnicodeSetAttribute"):
        wire_items.item(_WithSet, {"id": "x", "names": {"a"}})


# --- and back: a stream's records -----------------------------------------------------------


IMAGES: list[tuple[str, dict[str, Any]]] = [
    ("every value", events.stream_image(EVENT)),
    ("plain data", events.stream_image(EVENT._replace(data={"job_id": "job_1", "labels": 2}))),
    ("no data", {k: v for k, v in events.stream_image(EVENT).items() if k != "data"}),
    ("data null", {**events.stream_image(EVENT), "data": {"NULL": True}}),
    ("no stream", {k: v for k, v in events.stream_image(EVENT).items() if k != "stream"}),
]


@pytest.mark.parametrize("image", [image for _, image in IMAGES], ids=[name for name, _ in IMAGES])
def test_a_stream_image_reads_back_as_through_its_model(image: dict[str, Any]) -> None:
    expected = record_of(EventRecord, EVENT_MODEL.from_raw_data(image))
    read = events.from_stream_image(image)
    assert read == expected
    assert _exactly(read) == _exactly(expected)


def test_a_stream_image_is_what_the_model_serializes() -> None:
    expected = item_of(EVENT_MODEL, EVENT, stream=events.STREAM).serialize()
    assert _exactly(events.stream_image(EVENT)) == _exactly(expected)
    assert events.from_stream_image(events.stream_image(EVENT)) == EVENT
