"""Audit-log questions on moto's in-process backend, against a language model on loopback: what
the model is sent — at most the newest 200 matching entries, one compact line each, details cut
at 300 characters."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from etikett import settings
from etikett.domain.assistants.log_questions import (
    MAX_DETAILS,
    MAX_LOG_ENTRIES,
    LogQuestion,
    answer_question,
)
from etikett.domain.audit import audit
from etikett.domain.credentials import credentials
from etikett.domain.credentials.credentials import NewLanguageModel
from etikett.ids import new_id
from etikett.store import audit as audit_log
from support.model_server import ModelServer, Seen, tool_answer
from unit.domain.callers import human

pytestmark = pytest.mark.usefixtures("aws")

KEY = "sk-log-questions"


def _answers(seen: Seen) -> Any:
    return tool_answer(seen, "answer_question", {"answer": "Noted.", "cited_entry_ids": []})


@pytest.fixture(scope="module")
def model() -> Iterator[ModelServer]:
    with ModelServer(api_key=KEY, default=_answers) as running:
        yield running


@pytest.fixture
def ref(model: ModelServer, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("ETIKETT_OUTGOING_PRIVATE_NETWORKS", "true")  # the model is on loopback
    settings.reload()
    name = f"log-{new_id('x')[-8:].lower()}"
    credentials.create(
        human("createCredential", "admin"),
        NewLanguageModel.model_validate(
            {
                "ref": name,
                "kind": "language-model",
                "provider": "anthropic-messages",
                "model": "m",
                "endpoint": model.endpoint("anthropic-messages"),
                "apiKey": KEY,
            }
        ),
    )
    model.clear()
    return name


def _entries(target: str, count: int, details: dict[str, Any] | None = None) -> list[str]:
    """`count` audit entries about `target`, oldest first; their ids."""
    ids = []
    for _ in range(count):
        entry = audit.record(human("patchLabelDocument", "designer"), target, details=details)
        audit_log.append(entry)
        ids.append(entry.id)
    return ids


def _sent_lines(model: ModelServer) -> list[dict[str, Any]]:
    """The entries as the model got them: the JSON lines after the prompt's heading."""
    (seen,) = model.requests
    prompt = seen.json["messages"][0]["content"]
    text = prompt if isinstance(prompt, str) else prompt[0]["text"]
    _, _, listing = text.partition("entries, newest first:\n")
    return [json.loads(line) for line in listing.splitlines()]


def test_the_model_gets_the_newest_200_matching_entries_and_no_more(
    model: ModelServer, ref: str
) -> None:
    target = new_id("lbl")
    ids = _entries(target, MAX_LOG_ENTRIES + 7)
    _entries(new_id("lbl"), 3)  # not matching: never sent
    answer = answer_question(
        LogQuestion(question="What happened?", filters={"target": target}, credential=ref)
    )
    assert answer.entries_considered == MAX_LOG_ENTRIES == 200
    sent = _sent_lines(model)
    assert [line["id"] for line in sent] == list(reversed(ids))[:MAX_LOG_ENTRIES]
    assert {line["target"] for line in sent} == {target}
    assert set(ids[:7]).isdisjoint(line["id"] for line in sent)  # the oldest seven were cut
    assert KEY not in model.requests[0].text


def test_entry_details_are_cut_at_300_characters(model: ModelServer, ref: str) -> None:
    target = new_id("lbl")
    long_comment = "Ä" + "long comment " * 60  # about 780 characters
    (long_id,) = _entries(target, 1, details={"comment": long_comment, "version": 7})
    (short_id,) = _entries(target, 1, details={"version": 8})
    answer_question(LogQuestion(question="Why?", filters={"target": target}, credential=ref))
    by_id = {line["id"]: line for line in _sent_lines(model)}
    short = by_id[short_id]["details"]
    assert short == {"version": 8}  # short details stay an object
    cut = by_id[long_id]["details"]
    assert isinstance(cut, str) and len(cut) == MAX_DETAILS + 1 == 301 and cut.endswith("…")
    assert (
        cut[:-1]
        == json.dumps(
            {"comment": long_comment, "version": 7}, ensure_ascii=False, separators=(",", ":")
        )[:MAX_DETAILS]
    )
    assert long_comment not in model.requests[0].text
