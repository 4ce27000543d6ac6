"""The audit log: an entry per change, written with it (none for a change that failed), a
refusal written alone, and the log read back newest first by who, what, which target and when,
page by page."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit, audit_entries
from etikett.domain.counters import counters
from etikett.domain.labels import labels
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain.callers import agent, human
from unit.domain.conftest import Aws

pytestmark = pytest.mark.usefixtures("aws")


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


def _all(**filters: Any) -> list[audit_entries.AuditEntry]:
    found: list[audit_entries.AuditEntry] = []
    cursor = None
    while True:
        page = audit_entries.list_entries(limit=2, cursor=cursor, **filters)
        found += page.items
        if (cursor := page.next_cursor) is None:
            return found


def _label(by: Invocation, name: str = "Etikett") -> str:
    return labels.create_blank(by, labels.NewLabel(name=name)).id


def test_an_entry_records_who_did_what_to_which_target(empty: Aws) -> None:
    invocation = agent("createLabel", "designer", subject="label-bot")
    label_id = _label(invocation)
    (entry,) = audit_entries.list_entries(limit=10, cursor=None).items
    assert (entry.actor, entry.subject, entry.operation_id, entry.target_id) == (
        "service",
        "label-bot",
        "createLabel",
        label_id,
    )
    assert (entry.outcome, entry.code, entry.request_id) == (
        "success",
        None,
        invocation.request_id,
    )
    assert audit_entries.get_entry(entry.id) == entry
    assert entry.at.endswith("Z")


def test_a_failed_change_leaves_no_entry_and_a_refusal_is_written_alone(empty: Aws) -> None:
    name = "c_audit"
    counters.create(human("createCounter"), counters.NewCounter(name=name))
    _refused(
        ProblemCode.COUNTER_EXISTS,
        lambda: counters.create(human("createCounter"), counters.NewCounter(name=name)),
    )
    assert [e.operation_id for e in _all(target=name)] == ["createCounter"]
    audit.record_refusal(
        Invocation(None, "deleteCounter"), ProblemCode.AUTH_UNAUTHENTICATED, target_id=name
    )
    refusal = _all(target=name)[0]
    assert (refusal.actor, refusal.subject, refusal.outcome, refusal.code) == (
        "anonymous",
        "anonymous",
        "refused",
        "auth.unauthenticated",
    )


def test_the_log_pages_newest_first_without_gaps_or_repeats(empty: Aws) -> None:
    made = [_label(human("createLabel"), f"n{i}") for i in range(7)]
    assert [e.target_id for e in _all()] == made[::-1]
    first = audit_entries.list_entries(limit=3, cursor=None)
    assert len(first.items) == 3 and first.next_cursor is not None


def test_filters_by_actor_operation_and_target_combine(empty: Aws) -> None:
    ada, bot = human("createLabel", subject="ada"), agent("createLabel", subject="bot")
    ada_label, bot_label = _label(ada), _label(bot)
    labels.rename(
        human("patchLabel", subject="ada"), bot_label, labels.Rename(name="renamed by ada")
    )
    assert [e.target_id for e in _all(actor="ada")] == [bot_label, ada_label]
    assert [e.subject for e in _all(operation="createLabel")] == ["bot", "ada"]
    assert [e.operation_id for e in _all(target=bot_label)] == ["patchLabel", "createLabel"]
    assert [e.target_id for e in _all(actor="ada", operation="patchLabel")] == [bot_label]
    assert [e.operation_id for e in _all(target=bot_label, actor="bot")] == ["createLabel"]
    assert _all(target=ada_label, operation="patchLabel") == []


def test_a_time_range_selects_the_entries_made_within_it(empty: Aws) -> None:
    made = [_label(human("createLabel", subject="clocked"), f"t{i}") for i in range(3)]
    first, second, third = reversed(_all())
    at = [clock.parse_rfc3339(entry.at) for entry in (first, second, third)]
    assert at == sorted(set(at))  # three distinct milliseconds: each write takes longer
    assert [e.target_id for e in _all(since=at[1], until=at[2])] == made[:0:-1]
    assert [e.target_id for e in _all(until=at[0])] == made[:1]
    naive = at[2].replace(tzinfo=None)  # a time without an offset is UTC
    assert [e.target_id for e in _all(actor="clocked", since=naive)] == made[2:]
    later = at[2] + dt.timedelta(days=1)
    assert _all(since=later) == []
    error = _refused(ProblemCode.REQUEST_INVALID, lambda: _all(since=later, until=at[0]))
    assert "since" in error.params


def test_an_entry_is_found_by_the_millisecond_it_shows(
    empty: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time an entry shows and the time its id sorts by are one reading of the clock, so a
    range starting at an entry's own time holds it even when a millisecond passed meanwhile."""
    shown = dt.datetime(2026, 1, 2, 3, 4, 5, 678_000, tzinfo=dt.UTC)  # not now: ids mint now
    monkeypatch.setattr(clock, "now", lambda: shown)
    made = _label(human("createLabel", subject="clocked"), "t")
    monkeypatch.undo()
    (entry,) = _all(actor="clocked")
    assert clock.parse_rfc3339(entry.at) == shown
    assert [e.target_id for e in _all(since=shown, until=shown)] == [made]
    assert _all(until=shown - dt.timedelta(milliseconds=1)) == []


def test_a_filtered_list_pages_through_entries_the_filter_drops(empty: Aws) -> None:
    """The operation filter on the actor's index: pages must not end at a filtered-out stretch."""
    ada = "ada"
    for i in range(5):
        label_id = _label(human("createLabel", subject=ada), f"l{i}")
        labels.rename(human("patchLabel", subject=ada), label_id, labels.Rename(name=f"r{i}"))
    renames = _all(actor=ada, operation="patchLabel")
    assert len(renames) == 5 and {e.operation_id for e in renames} == {"patchLabel"}


def test_unknown_entries_and_foreign_cursors_are_refused() -> None:
    _refused(ProblemCode.AUDIT_NOT_FOUND, lambda: audit_entries.get_entry("aud_missing"))
    _label(human("createLabel"))
    _label(human("createLabel"))
    cursor = labels.list_labels(1, None, None).next_cursor
    _refused(
        ProblemCode.REQUEST_INVALID_CURSOR,
        lambda: audit_entries.list_entries(limit=2, cursor=cursor),
    )
    _refused(
        ProblemCode.REQUEST_INVALID_CURSOR, lambda: audit_entries.list_entries(limit=2, cursor="%%")
    )
