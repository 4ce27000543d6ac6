"""Print requests: the whole request checked before anything is taken or written; a released
(or named approved) version to a printer of its density; one archive entry per record with its
counter values; small prints rendered at once, large ones in the print-render function; the
same idempotency key and body answered once."""

from __future__ import annotations

import time
from typing import Any

import pytest

from etikett import clock
from etikett.domain.agent import claims, runner_agent, runner_messages
from etikett.domain.counters import counters
from etikett.domain.labels import label_versions
from etikett.domain.labels.label_versions import StatusChange
from etikett.domain.printers import printers
from etikett.domain.printing import (
    jobs,
    print_archive,
    print_idempotency,
    print_rendering,
    printing,
)
from etikett.domain.printing.printing import PrintRequest
from etikett.store import runners as runner_store
from etikett.store.runners import RunnerRecord
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain import aws_calls, build
from unit.domain.callers import agent, human, trail
from unit.domain.conftest import Aws

pytestmark = pytest.mark.usefixtures("aws")


def _document(counter: str | None = None) -> dict[str, Any]:
    objects: list[dict[str, Any]] = [
        {"id": "title", "type": "text", "x_mm": 2, "y_mm": 2, "size_pt": 9, "expression": "name"}
    ]
    if counter:
        objects.append(
            {
                "id": "serial",
                "type": "text",
                "x_mm": 2,
                "y_mm": 12,
                "size_pt": 9,
                "expression": f"string(counters.{counter})",
            }
        )
    return {
        "size": {"width_mm": 50, "height_mm": 25},
        "dpi": 203,
        "variables": [
            {"name": "name", "required": True, "sample": "Muster"},
            {"name": "qty", "type": "integer", "default": 1},
            {"name": "shout", "expression": "name + '!'"},
        ],
        "objects": objects,
    }


class Site:
    """An online Runner with a 203-dpi and a 300-dpi ZPL printer."""

    def __init__(self) -> None:
        self.runner = build.runner()
        tag = self.runner.id[-8:].lower()
        self.printer = build.printer(self.runner.id, f"zebra-{tag}").name
        self.fine = build.printer(self.runner.id, f"fine-{tag}", dpi=300).name

    def record(self) -> RunnerRecord:
        record = runner_store.get_runner(self.runner.id)
        assert record is not None
        return record


@pytest.fixture(scope="module")
def site(aws: Aws) -> Site:
    return Site()


def _print(site: Site, label: str, by: Any = None, **body: Any) -> printing.PrintAccepted:
    request = PrintRequest(label_id=label, printer=body.pop("printer", site.printer), **body)
    return printing.submit(by or human("postPrint", "operator"), request)


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


def _counter(name: str, **more: Any) -> None:
    counters.create(human("createCounter", "operator"), counters.NewCounter(name=name, **more))


def _unique(prefix: str) -> str:
    return f"{prefix}_{build.group().id[-8:].lower()}"


def test_a_print_is_queued_with_one_archive_entry_per_record_and_its_audit_entry(
    site: Site,
) -> None:
    label = build.released_label(_document())
    operator = human("postPrint", "operator", subject="olga")
    accepted = _print(
        site, label, by=operator, data=[{"name": "A"}, {"name": "B", "qty": 3}], copies=2
    )
    assert accepted.status == "queued" and len(accepted.archive_entry_ids) == 2
    job = jobs.get(accepted.job_id)
    assert (job.kind, job.status, job.runner_id) == ("print", "queued", site.runner.id)
    entries = print_archive.list_entries(10, None, job_id=accepted.job_id).items
    assert [e.id for e in entries] == accepted.archive_entry_ids
    assert [e.variables for e in entries] == [{"name": "A"}, {"name": "B", "qty": 3}]
    assert {(e.label_version, e.copies, e.printer) for e in entries} == {(1, 2, site.printer)}
    assert entries[0].actor == {"actor": "human", "subject": "olga"}
    (entry,) = trail(accepted.job_id)
    assert entry.operation_id == "postPrint"
    assert (entry.details or {})["labels"] == 2 and (entry.details or {})["copies"] == 2
    (claimed,) = [
        c
        for c in claims.claim(site.record(), runner_messages.ClaimRequest(wait_seconds=0)).jobs
        if c.job_id == accepted.job_id
    ]
    assert claimed.payload["expected_labels"] == 4 and claimed.data_base64


def test_only_released_or_named_approved_versions_print(site: Site) -> None:
    draft = build.labels.create(human("createLabel"), "Entwurf", _document())
    _refused(
        ProblemCode.PRINT_LABEL_NOT_RELEASED,
        lambda: _print(site, draft.id, variables={"name": "x"}),
    )
    _refused(
        ProblemCode.PRINT_LABEL_NOT_RELEASED,
        lambda: _print(site, f"{draft.id}@1", variables={"name": "x"}),
    )
    label = build.released_label(_document())
    label_versions.patch_document(
        human("patch"),
        label,
        label_versions.DocumentPatch(
            operations=[{"op": "replace", "path": "/size/height_mm", "value": 30}]
        ),
    )
    assert _print(site, f"{label}@1", variables={"name": "x"}).status == "queued"
    _refused(
        ProblemCode.PRINT_LABEL_NOT_RELEASED,
        lambda: _print(site, f"{label}@2", variables={"name": "x"}),
    )
    _refused(
        ProblemCode.LABEL_VERSION_NOT_FOUND,
        lambda: _print(site, f"{label}@9", variables={"name": "x"}),
    )
    label_versions.set_status(
        human("postLabelStatus", "approver"), label, StatusChange(version=1, status="retired")
    )
    _refused(
        ProblemCode.PRINT_LABEL_NOT_RELEASED, lambda: _print(site, label, variables={"name": "x"})
    )


def test_a_print_like_an_earlier_one_reads_its_targets_at_once_and_sees_every_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """What a print names (the released version, the printer by name, its Runner) is read in one
    round trip when an earlier print found it; a newer release, or another printer under the
    name, is printed at once, as if nothing had been remembered."""
    runner = build.runner()
    name = f"again-{runner.id[-8:].lower()}"
    printer = build.printer(runner.id, name)
    label = build.released_label(_document())

    def print_one(value: str) -> printing.PrintAccepted:
        request = PrintRequest(label_id=label, printer=name, variables={"name": value})
        return printing.submit(human("postPrint", "operator"), request)

    first = print_one("a")
    calls = aws_calls.recorded(monkeypatch)
    second = print_one("b")
    assert [c for c in calls if c.endswith(("GetItem", "GetItems", "Query"))] == [
        "TransactGetItems"
    ]
    assert jobs.get(first.job_id).runner_id == jobs.get(second.job_id).runner_id == runner.id

    build.release_taller(label)
    newer = print_one("c")
    (entry,) = print_archive.list_entries(10, None, job_id=newer.job_id).items
    assert entry.label_version == 2

    printers.delete(human("deletePrinter", "admin"), printer.id)
    elsewhere = build.runner()
    replacement = build.printer(elsewhere.id, name.upper())
    moved = print_one("d")
    assert jobs.get(moved.job_id).runner_id == elsewhere.id
    (entry,) = print_archive.list_entries(10, None, job_id=moved.job_id).items
    assert (entry.printer, entry.label_version) == (replacement.name, 2)


def test_references_printers_and_densities_are_checked_first(site: Site) -> None:
    label = build.released_label(_document())
    _refused(ProblemCode.REQUEST_INVALID, lambda: _print(site, "label-7", variables={"name": "x"}))
    _refused(
        ProblemCode.LABEL_NOT_FOUND,
        lambda: _print(site, "lbl_01JAAAAAAAAAAAAAAAAAAAAAAA", variables={"name": "x"}),
    )
    _refused(
        ProblemCode.PRINTER_NOT_FOUND,
        lambda: _print(site, label, printer="no-such-printer", variables={"name": "x"}),
    )
    error = _refused(
        ProblemCode.PRINT_DENSITY_MISMATCH,
        lambda: _print(site, label, printer=site.fine, variables={"name": "x"}),
    )
    assert (error.params["label_dpi"], error.params["printer_dpi"]) == (203, 300)
    assert print_archive.list_entries(10, None, label_id=label).items == []


def test_every_bad_record_is_named_and_no_counter_value_is_taken(site: Site) -> None:
    name = _unique("bad")
    _counter(name)
    label = build.released_label(_document(counter=name))
    records = [
        {"name": "ok"},
        {"qty": 2},
        {"name": "x", "shout": "no"},
        {"name": "y", "qty": "viel"},
    ]
    error = _refused(ProblemCode.PRINT_VARIABLES_INVALID, lambda: _print(site, label, data=records))
    assert sorted({(e["record"], e["variable"]) for e in error.params["errors"]}) == [
        (1, "name"),
        (2, "shout"),
        (3, "qty"),
    ]
    assert counters.get(name).issued == 0
    assert print_archive.list_entries(10, None, label_id=label).items == []


def test_too_many_records_are_refused_whole(site: Site) -> None:
    label = build.released_label(_document())
    data = [{"name": "x"}] * (printing.MAX_RECORDS + 1)
    error = _refused(ProblemCode.PRINT_TOO_MANY_RECORDS, lambda: _print(site, label, data=data))
    assert error.status == 413


def test_counter_values_are_consecutive_per_record_and_never_given_twice(site: Site) -> None:
    name = _unique("sn")
    _counter(name, start=100, format="000000")
    label = build.released_label(_document(counter=name))
    first = _print(site, label, data=[{"name": "a"}, {"name": "b"}])
    second = _print(site, label, variables={"name": "c"})
    serials = [
        e.serials[name]
        for accepted in (first, second)
        for e in print_archive.list_entries(10, None, job_id=accepted.job_id).items
    ]
    assert serials == ["000100", "000101", "000102"]
    assert (trail(first.job_id)[0].details or {})["serials"] == {name: [100, 101]}
    assert counters.get(name).issued == 3


def test_a_large_print_renders_in_the_background_once(site: Site) -> None:
    name = _unique("bg")
    _counter(name)
    label = build.released_label(_document(counter=name))
    records = [{"name": f"n{i}"} for i in range(printing.INLINE_RECORDS + 5)]
    accepted = _print(site, label, data=records)
    assert accepted.status == "rendering"
    entries = print_archive.list_entries(100, None, job_id=accepted.job_id).items
    assert [e.serials[name] for e in entries] == list(range(1, len(records) + 1))
    print_rendering.render_queued(accepted.job_id)
    assert jobs.get(accepted.job_id).status == "queued"
    print_rendering.render_queued(accepted.job_id)  # the message delivered again
    claimed = claims.claim(site.record(), runner_messages.ClaimRequest(wait_seconds=0, max_jobs=10))
    assert [c.job_id for c in claimed.jobs].count(accepted.job_id) == 1


def test_a_label_that_cannot_render_fails_its_job_with_the_reason(site: Site, aws: Aws) -> None:
    document = _document()
    document["objects"].append(
        {
            "id": "ean",
            "type": "barcode",
            "symbology": "ean13",
            "x_mm": 2,
            "y_mm": 8,
            "height_mm": 10,
            "module_width_dots": 2,
            "expression": "name",
        }
    )
    document["variables"][0]["sample"] = "400638133393"
    label = build.released_label(document)
    with pytest.raises(EtikettError) as refused:
        _print(site, label, variables={"name": "not digits"})
    assert refused.value.status == 422
    (entry,) = print_archive.list_entries(10, None, label_id=label).items
    assert (entry.outcome, entry.outcome_reason) == ("failed", "render_failed")
    assert jobs.get(entry.job_id).status == "failed"
    assert [e.kind for e in aws.events_about(entry.job_id)] == ["print.failed"]


def test_a_print_for_an_offline_runner_is_held_and_announced(aws: Aws) -> None:
    runner = build.runner(online=False)
    printer = build.printer(runner.id, f"offline-{runner.id[-8:].lower()}")
    label = build.released_label(_document())
    accepted = printing.submit(
        human("postPrint", "operator"),
        PrintRequest(label_id=label, printer=printer.name, variables={"name": "x"}),
    )
    assert accepted.status == "held"
    (entry,) = print_archive.list_entries(10, None, job_id=accepted.job_id).items
    assert (entry.outcome, entry.outcome_reason) == ("held", "runner_offline")
    assert [(e.kind, e.data["reason"]) for e in aws.events_about(accepted.job_id)] == [
        ("print.held", "runner_offline")
    ]


# --- idempotency ------------------------------------------------------------------------------


# Outside Lambda there is no context to tell Powertools the time left (it warns so).
no_lambda_context = pytest.mark.filterwarnings("ignore:Couldn't determine the remaining time")


def _once(site: Site, label: str, key: str, by: Any, **body: Any) -> dict[str, Any]:
    request = PrintRequest(label_id=label, printer=site.printer, idempotency_key=key, **body)
    return printing.print_request(by, request)


@no_lambda_context
def test_the_same_key_and_body_answer_the_first_answer_and_print_nothing_more(site: Site) -> None:
    label = build.released_label(_document())
    caller = agent("postPrint", "operator")
    first = _once(site, label, "order-4711", caller, variables={"name": "x"})
    again = _once(site, label, "order-4711", caller, variables={"name": "x"})
    assert again == first
    assert [e.job_id for e in print_archive.list_entries(10, None, label_id=label).items] == [
        first["job_id"]
    ]
    error = _refused(
        ProblemCode.PRINT_IDEMPOTENCY_CONFLICT,
        lambda: _once(site, label, "order-4711", caller, variables={"name": "y"}),
    )
    assert error.status == 409 and error.params["idempotency_key"] == "order-4711"
    other = _once(
        site, label, "order-4711", agent("postPrint", "operator"), variables={"name": "x"}
    )
    assert other["job_id"] != first["job_id"]  # keys are per caller
    assert len(print_archive.list_entries(10, None, label_id=label).items) == 2


@no_lambda_context
def test_a_refused_request_does_not_spend_its_key(site: Site) -> None:
    label = build.released_label(_document())
    caller = agent("postPrint", "operator")
    _refused(
        ProblemCode.PRINT_VARIABLES_INVALID,
        lambda: _once(site, label, "retry-me", caller, variables={"qty": 1}),
    )
    accepted = _once(site, label, "retry-me", caller, variables={"qty": 1, "name": "x"})
    assert accepted["status"] == "queued"


# --- the archive ------------------------------------------------------------------------------


def test_the_archive_shows_each_label_s_prints_newest_first_with_their_outcome(
    site: Site,
) -> None:
    label = build.released_label(_document())
    older = _print(site, label, data=[{"name": "a"}, {"name": "b"}])
    newer = _print(site, label, variables={"name": "c"})
    listed = print_archive.list_entries(2, None, label_id=label)
    rest = print_archive.list_entries(2, listed.next_cursor, label_id=label)
    assert [e.job_id for e in listed.items + rest.items] == [
        newer.job_id,
        older.job_id,
        older.job_id,
    ]
    assert {e.outcome for e in listed.items + rest.items} == {None}  # nothing reported yet
    record = site.record()
    claimed = {
        c.job_id: c
        for c in claims.claim(
            record, runner_messages.ClaimRequest(wait_seconds=0, max_jobs=10)
        ).jobs
    }
    runner_agent.report(
        human("postRunnerJobReport"),
        record,
        older.job_id,
        runner_messages.JobReport(receipt=claimed[older.job_id].receipt, status="sent"),
    )
    entry = print_archive.get_entry(older.archive_entry_ids[1])
    assert (entry.outcome, entry.variables) == ("sent", {"name": "b"})
    _refused(ProblemCode.ARCHIVE_NOT_FOUND, lambda: print_archive.get_entry("arc_missing"))


def test_a_request_in_progress_holds_its_key_only_as_long_as_its_invocation(aws: Aws) -> None:
    """Inside a Lambda invocation (the entry sets its deadline), the key of a request still
    running expires when the invocation would have ended: a crash does not block it for a day."""
    table = aws.ref("IdempotencyTable")
    seen: list[dict[str, Any]] = []

    def submit() -> dict[str, Any]:
        items = aws.client("dynamodb").scan(TableName=table)["Items"]
        seen.extend(item for item in items if item.get("status", {}).get("S") == "INPROGRESS")
        return {"job_id": "job_x", "archive_entry_ids": [], "status": "queued"}

    deadline = clock.start_invocation(20_000)
    try:
        before = time.time() * 1000
        answer = print_idempotency.once(agent("postPrint", "operator"), "k-deadline", {}, submit)
    finally:
        clock.end_invocation(deadline)
    assert answer["job_id"] == "job_x"
    (item,) = seen
    expires = int(item["in_progress_expiration"]["N"])
    assert before + 19_000 <= expires <= before + 21_000, (before, expires)
    assert clock.remaining_ms() is None
