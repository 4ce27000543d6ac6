"""The AI operations over REST against a language model on loopback: what each sends (never the
key, samples only when shared), what each answers, that nothing is saved, roles, and every
provider failure as its problem."""

from __future__ import annotations

import base64
import io
import json

import pytest

from support.client import Api, problem, unique
from support.model_server import Answer, ModelServer, Seen, text_answer, tool_answer

from .conftest import AI_TIMEOUT, KEY, clear_credentials, language_model

SAMPLE = "Sample-Kunde-4711"
LABEL = {
    "size": {"width_mm": 60, "height_mm": 30},
    "dpi": 203,
    "variables": [{"name": "name", "type": "string", "required": True, "sample": SAMPLE}],
    "objects": [
        {"id": "title", "type": "text", "x_mm": 2, "y_mm": 2, "size_pt": 10, "expression": "name"}
    ],
}
FLOW = {
    "nodes": [
        {"id": "in", "type": "trigger.http", "path": "orders", "wires": ["f"]},
        {"id": "f", "type": "logic.filter", "condition": "record.n >", "wires": ["log"]},
        {"id": "log", "type": "action.log", "message": '"n=" + string(record.n)'},
    ],
    "samples": [{"n": 2, "customer": SAMPLE}],
}
ADD_BOX = {
    "op": "add",
    "path": "/objects/-",
    "value": {"id": "frame", "type": "box", "x_mm": 1, "y_mm": 1, "width_mm": 58, "height_mm": 28},
}


def _label(api: Api) -> str:
    label = api.post(
        "/labels/from-dimensions", json={"name": unique("ai"), "width_mm": 60, "height_mm": 30}
    ).json()
    patched = api.request(
        "PATCH",
        f"/labels/{label['id']}/document",
        json={"operations": [{"op": "replace", "path": "", "value": LABEL}]},
    )
    assert patched.status_code == 200, patched.text
    return str(label["id"])


def _flow(api: Api) -> str:
    created = api.post("/flows", json={"name": unique("aiflow"), "document": FLOW})
    assert created.status_code == 201, created.text
    return str(created.json()["id"])


def _sent(seen: Seen) -> str:
    """Everything a request carried, headers included, as one text."""
    return json.dumps(seen.headers) + seen.text


def _no_key_in_bodies(model: ModelServer) -> None:
    for seen in model.requests:
        assert KEY not in seen.text


@pytest.fixture(scope="module")
def claude(root: Api, model: ModelServer) -> str:
    clear_credentials(root)
    return str(language_model(root, model, "anthropic-messages", default=True)["ref"])


@pytest.fixture(scope="module")
def gpt(root: Api, model: ModelServer, claude: str) -> str:
    return str(language_model(root, model, "openai-chat")["ref"])


@pytest.fixture(scope="module")
def sharing(root: Api, model: ModelServer, claude: str) -> str:
    return str(language_model(root, model, "openai-chat", shareSampleValues=True)["ref"])


@pytest.fixture(scope="module")
def generic(root: Api, model: ModelServer, claude: str) -> str:
    return str(language_model(root, model, "generic-json")["ref"])


# --- which credential -------------------------------------------------------------------------


def test_no_language_model_is_a_conflict(
    root: Api, people: dict[str, Api], model: ModelServer
) -> None:
    clear_credentials(root)
    designer = people["designer"]
    flow_id = _flow(designer)
    body = {"target": f"{flow_id}@1", "finding": {"code": "flow.cel_invalid", "message": "x"}}
    problem(designer.post("/ai/lint-erklaerung", json=body), 409, "ai.no_credential")
    secret = root.post("/credentials", json={"ref": unique("s"), "kind": "secret", "value": "v"})
    problem(designer.post("/ai/lint-erklaerung", json=body), 409, "ai.no_credential")
    problem(
        designer.post("/ai/lint-erklaerung", json={**body, "credential": secret.json()["ref"]}),
        422,
        "credential.not_language_model",
    )
    # The only language model is used without being named; with two, one must be the default.
    only = language_model(root, model, "openai-chat")
    assert designer.post("/ai/lint-erklaerung", json=body).status_code == 200
    language_model(root, model, "openai-chat")
    problem(designer.post("/ai/lint-erklaerung", json=body), 409, "ai.no_credential")
    assert (
        designer.post("/ai/lint-erklaerung", json={**body, "credential": only["ref"]}).status_code
        == 200
    )
    problem(
        designer.post("/ai/lint-erklaerung", json={**body, "credential": "nope"}),
        404,
        "credential.not_found",
    )
    clear_credentials(root)


# --- lint explanations --------------------------------------------------------------------------


def test_a_flow_finding_is_explained_with_checked_suggestions(
    people: dict[str, Api], model: ModelServer, claude: str
) -> None:
    designer = people["designer"]
    flow_id = _flow(designer)
    finding = designer.post(f"/flows/{flow_id}/lint", json={}).json()["findings"][0]
    assert finding["code"] == "flow.cel_invalid"
    model.then(
        lambda seen: tool_answer(
            seen,
            "explain_finding",
            {
                "explanation": "The condition stops after `>`: compare with a number.",
                "operations": [
                    {"op": "replace", "path": "/nodes/1/condition", "value": "record.n > 1"},
                    {"op": "replace", "path": "/nodes/1/id", "value": "renamed"},  # an id: dropped
                    {"op": "remove", "path": "/nodes/7"},  # does not apply: dropped
                    {"op": "add", "path": "/nodes/0/wires/-", "value": "ghost"},  # invalid: dropped
                ],
            },
        )
    )
    answer = designer.post(
        "/ai/lint-erklaerung", json={"target": f"{flow_id}@1", "finding": finding}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "explanation": "The condition stops after `>`: compare with a number.",
        "suggested_operations": [
            {"op": "replace", "path": "/nodes/1/condition", "value": "record.n > 1"}
        ],
        "dropped_operations": 3,
        "model": "test-model",
    }
    (seen,) = model.requests
    prompt = seen.json["messages"][0]["content"][0]["text"]
    assert '"record.n >"' in prompt and "flow.cel_invalid" in prompt
    assert "logic.filter" in prompt  # the node type's registry entry
    assert SAMPLE not in _sent(seen) and seen.headers["x-api-key"] == KEY
    _no_key_in_bodies(model)
    assert designer.get(f"/flows/{flow_id}").json()["latest_version"] == 1  # nothing saved


def test_a_finding_of_unsaved_changes_is_explained_against_them(
    people: dict[str, Api], model: ModelServer, claude: str
) -> None:
    """The flow editor asks about its unsaved document: the model sees that document, and the
    suggestions are checked against it, not against the saved version."""
    designer = people["designer"]
    flow_id = _flow(designer)
    unsaved = json.loads(json.dumps(FLOW))
    unsaved["nodes"][1]["condition"] = "record.n > 1"
    unsaved["nodes"][2]["message"] = "record.m"
    finding = {
        "code": "flow.cel_name_unknown",
        "path": "/nodes/2/message",
        "node_id": "log",
        "message": "record.m: no record that reaches this node has the field 'm'",
    }
    model.then(
        lambda seen: tool_answer(
            seen,
            "explain_finding",
            {
                "explanation": "Records have `n`, not `m`.",
                "operations": [
                    {"op": "replace", "path": "/nodes/2/message", "value": "string(record.n)"},
                    {"op": "test", "path": "/nodes/1/condition", "value": "record.n >"},  # saved
                ],
            },
        )
    )
    body = {"target": f"{flow_id}@1", "finding": finding, "document": unsaved}
    answer = designer.post("/ai/lint-erklaerung", json=body)
    assert answer.status_code == 200, answer.text
    assert answer.json()["suggested_operations"] == [
        {"op": "replace", "path": "/nodes/2/message", "value": "string(record.n)"}
    ]
    assert answer.json()["dropped_operations"] == 1
    (seen,) = model.requests
    prompt = seen.json["messages"][0]["content"][0]["text"]
    assert f"unsaved changes to {flow_id}" in prompt and '"record.m"' in prompt
    assert '"record.n >"' not in prompt
    assert designer.get(f"/flows/{flow_id}").json()["latest_version"] == 1
    broken = {"nodes": [{"id": "a", "type": "action.log", "wires": ["nowhere"]}]}
    problem(
        designer.post("/ai/lint-erklaerung", json={**body, "document": broken}),
        422,
        "document.invalid",
    )
    problem(
        designer.post(
            "/ai/lint-erklaerung",
            json={**body, "target": "flw_01J00000000000000000000000"},
        ),
        404,
        "flow.not_found",
    )


def test_a_label_finding_through_generic_json(
    people: dict[str, Api], model: ModelServer, generic: str
) -> None:
    operator = people["operator"]
    label_id = _label(people["designer"])
    model.then(
        lambda seen: text_answer(
            seen,
            'Sure: {"explanation": "The text is empty without a name.", "operations": '
            '[{"op": "replace", "path": "/objects/0/size_pt", "value": 12}]}',
        )
    )
    answer = operator.post(
        "/ai/lint-erklaerung",
        json={
            "target": f"{label_id}@2",
            "finding": {"path": "/objects/0", "message": "No name, no text."},
            "credential": generic,
        },
    )
    assert answer.status_code == 200, answer.text
    assert answer.json()["explanation"] == "The text is empty without a name."
    assert answer.json()["suggested_operations"] == [
        {"op": "replace", "path": "/objects/0/size_pt", "value": 12}
    ]
    (seen,) = model.requests
    assert (
        seen.path == "/generate"
        and SAMPLE not in seen.text
        and seen.headers["authorization"] == f"Bearer {KEY}"
    )

    model.then(lambda seen: text_answer(seen, "Just prose, no JSON."))
    plain = operator.post(
        "/ai/lint-erklaerung",
        json={"target": label_id, "finding": {"message": "x"}, "credential": generic},
    ).json()
    assert plain["explanation"] == "Just prose, no JSON." and plain["suggested_operations"] == []


def test_lint_explanation_roles_and_targets(
    people: dict[str, Api], agents: dict[str, Api], claude: str
) -> None:
    body = {"target": "flw_01J00000000000000000000000@1", "finding": {"message": "x"}}
    problem(people["approver"].post("/ai/lint-erklaerung", json=body), 403, "auth.forbidden")
    problem(agents["designer"].post("/ai/lint-erklaerung", json=body), 404, "flow.not_found")
    problem(
        people["designer"].post("/ai/lint-erklaerung", json={**body, "target": "prn_1@1"}),
        422,
        "request.invalid",
    )


# --- audit-log questions -------------------------------------------------------------------------


def test_log_questions_cite_only_entries_given(
    root: Api, people: dict[str, Api], agents: dict[str, Api], model: ModelServer, claude: str
) -> None:
    designer = people["designer"]
    label_id = _label(designer)
    agents["designer"].request(
        "PATCH",
        f"/labels/{label_id}/document",
        json={"operations": [{"op": "replace", "path": "/objects/0/size_pt", "value": 14}]},
    )
    entries = root.get("/audit-log", params={"target": label_id}).json()["items"]
    assert len(entries) == 3
    invented = "aud_01J0000000000000000000000Z"

    def cite(seen: Seen) -> Answer:
        return tool_answer(
            seen,
            "answer_question",
            {
                "answer": f"An agent changed the size in {entries[0]['id']} (see also {invented}).",
                "cited_entry_ids": [entries[0]["id"], invented, entries[0]["id"]],
            },
        )

    model.then(cite)
    approver = people["approver"]
    answer = approver.post(
        "/ai/log-qa", json={"question": "Who changed the label?", "filters": {"target": label_id}}
    )
    assert answer.status_code == 200, answer.text
    assert answer.json() == {
        "answer": f"An agent changed the size in {entries[0]['id']} (see also [unknown entry]).",
        "cited_entry_ids": [entries[0]["id"]],
        "entries_considered": 3,
        "model": "test-model",
    }
    prompt = model.requests[0].json["messages"][0]["content"][0]["text"]
    lines = [json.loads(line) for line in prompt.splitlines() if line.startswith('{"id"')]
    assert [line["id"] for line in lines] == [e["id"] for e in entries]
    assert set(lines[0]) <= {
        "id",
        "at",
        "actor",
        "subject",
        "op",
        "target",
        "outcome",
        "code",
        "details",
    }

    # Structured filters: only the agent's entry; nothing matching answers without the model.
    model.clear()
    model.then(
        lambda seen: tool_answer(seen, "answer_question", {"answer": "One.", "cited_entry_ids": []})
    )
    by_agent = root.post(
        "/ai/log-qa",
        json={
            "question": "What did agents do?",
            "filters": {"target": label_id, "actor": "service"},
        },
    ).json()
    assert by_agent["entries_considered"] == 1
    assert (
        entries[0]["id"] in model.requests[0].text
        and entries[1]["id"] not in model.requests[0].text
    )
    model.clear()
    empty = root.post(
        "/ai/log-qa",
        json={
            "question": "Anything?",
            "filters": {"target": label_id, "until": "2001-01-01T00:00:00Z"},
        },
    ).json()
    assert (
        empty["entries_considered"] == 0 and empty["cited_entry_ids"] == [] and not model.requests
    )

    problem(designer.post("/ai/log-qa", json={"question": "x"}), 403, "auth.forbidden")
    problem(people["operator"].post("/ai/log-qa", json={"question": "x"}), 403, "auth.forbidden")
    problem(
        root.post("/ai/log-qa", json={"question": "x", "filters": {"actor": "robot"}}),
        422,
        "request.invalid",
    )


# --- Copilots ------------------------------------------------------------------------------------


def test_the_label_copilot_proposes_and_never_saves(
    people: dict[str, Api], model: ModelServer, claude: str, sharing: str
) -> None:
    from PIL import Image

    designer = people["designer"]
    label_id = _label(designer)
    model.then(
        lambda seen: tool_answer(
            seen, "propose_patch", {"operations": [ADD_BOX], "explanation": "A frame."}
        )
    )
    answer = designer.post(f"/labels/{label_id}/copilot", json={"instruction": "Draw a frame."})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["saved"] is False and body["explanation"] == "A frame."
    assert body["proposal"]["base_version"] == 2 and body["proposal"]["operations"] == [ADD_BOX]
    assert [o["id"] for o in body["proposal"]["document"]["objects"]] == ["title", "frame"]
    image = Image.open(io.BytesIO(base64.b64decode(body["preview_png_base64"])))
    assert image.size == (480, 240) and image.mode == "1"
    assert designer.get(f"/labels/{label_id}").json()["latest_version"] == 2

    (seen,) = model.requests
    prompt = seen.json["messages"][0]["content"][0]["text"]
    assert "Draw a frame." in prompt and '"title"' in prompt and "symbologies" in prompt
    assert SAMPLE not in _sent(seen) and seen.json["tool_choice"]["name"] == "propose_patch"

    # With shareSampleValues on, the samples go too.
    model.clear()
    model.then(
        lambda seen: tool_answer(seen, "propose_patch", {"operations": [], "explanation": "-"})
    )
    shared = designer.post(
        f"/labels/{label_id}/copilot", json={"instruction": "Nothing.", "credential": sharing}
    )
    assert shared.status_code == 200, shared.text
    assert SAMPLE in model.requests[0].text and model.requests[0].path == "/v1/chat/completions"


def test_an_invalid_proposal_is_sent_back_once(
    people: dict[str, Api], model: ModelServer, claude: str
) -> None:
    designer = people["designer"]
    label_id = _label(designer)
    rename = {"op": "replace", "path": "/objects/0/id", "value": "renamed"}
    model.then(
        lambda seen: tool_answer(
            seen, "propose_patch", {"operations": [rename], "explanation": "x"}
        ),
        lambda seen: tool_answer(
            seen, "propose_patch", {"operations": [ADD_BOX], "explanation": "ok"}, call="2"
        ),
    )
    answer = designer.post(f"/labels/{label_id}/copilot", json={"instruction": "Rename."})
    assert answer.status_code == 200, answer.text
    assert answer.json()["proposal"]["operations"] == [ADD_BOX]
    retry = model.requests[1].json["messages"]
    assert retry[1]["role"] == "assistant" and retry[1]["content"][-1]["type"] == "tool_use"
    result = retry[2]["content"][0]
    assert (
        result["type"] == "tool_result" and result["is_error"] is True and "id" in result["content"]
    )

    model.clear()
    model.then(
        lambda seen: tool_answer(
            seen, "propose_patch", {"operations": [rename], "explanation": "x"}
        ),
        lambda seen: text_answer(seen, "I refuse to use the tool."),
    )
    failed = designer.post(f"/labels/{label_id}/copilot", json={"instruction": "Rename."})
    problem(failed, 502, "ai.bad_response")
    assert len(model.requests) == 2
    assert designer.get(f"/labels/{label_id}").json()["latest_version"] == 2


def test_the_form_copilot(people: dict[str, Api], model: ModelServer, gpt: str) -> None:
    designer = people["designer"]
    label_id = _label(designer)
    change = {"op": "replace", "path": "/fields/0/label", "value": "Kundenname"}
    model.then(
        lambda seen: tool_answer(
            seen, "propose_patch", {"operations": [change], "explanation": "Renamed."}
        )
    )
    answer = designer.post(
        f"/labels/{label_id}/form/copilot", json={"instruction": "German label.", "credential": gpt}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["proposal"]["base_version"] == 0  # the derived form
    assert body["proposal"]["document"]["fields"][0]["label"] == "Kundenname"
    assert body.get("preview_png_base64") is None and body["saved"] is False
    assert designer.get(f"/labels/{label_id}/form").json()["version"] == 0
    assert SAMPLE not in model.requests[0].text

    model.clear()
    bad = {"op": "replace", "path": "/fields/0/variable", "value": "nobody"}
    model.then(
        lambda seen: tool_answer(seen, "propose_patch", {"operations": [bad], "explanation": "x"}),
        lambda seen: tool_answer(
            seen, "propose_patch", {"operations": [bad], "explanation": "x"}, call="2"
        ),
    )
    problem(
        designer.post(
            f"/labels/{label_id}/form/copilot", json={"instruction": "x", "credential": gpt}
        ),
        502,
        "ai.bad_response",
    )
    assert model.requests[1].json["messages"][-1]["role"] == "tool"


def test_the_flow_copilot_answers_lint(
    people: dict[str, Api], model: ModelServer, claude: str
) -> None:
    designer = people["designer"]
    flow_id = _flow(designer)
    model.then(
        lambda seen: tool_answer(
            seen,
            "propose_patch",
            {
                "operations": [
                    {"op": "replace", "path": "/nodes/1/condition", "value": "record.n > 1"},
                    {
                        "op": "add",
                        "path": "/nodes/-",
                        "value": {"id": "lonely", "type": "action.log", "message": '"x"'},
                    },
                ],
                "explanation": "Fixed.",
            },
        )
    )
    answer = designer.post(
        f"/flows/{flow_id}/copilot", json={"instruction": "Fix it.", "version": 1}
    )
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert [f["code"] for f in body["findings"]] == ["flow.unreachable_node"]
    assert body["proposal"]["document"]["nodes"][1]["condition"] == "record.n > 1"
    assert SAMPLE not in model.requests[0].text
    assert designer.get(f"/flows/{flow_id}").json()["latest_version"] == 1


def test_copilots_refuse_generic_json_and_check_roles(
    people: dict[str, Api], model: ModelServer, generic: str
) -> None:
    designer = people["designer"]
    label_id, flow_id = _label(designer), _flow(designer)
    for path in (
        f"/labels/{label_id}/copilot",
        f"/labels/{label_id}/form/copilot",
        f"/flows/{flow_id}/copilot",
    ):
        problem(
            designer.post(path, json={"instruction": "x", "credential": generic}),
            422,
            "ai.provider_unsupported",
        )
        for role in ("operator", "approver"):
            problem(people[role].post(path, json={"instruction": "x"}), 403, "auth.forbidden")
    assert not model.requests
    problem(
        designer.post("/labels/lbl_01J00000000000000000000000/copilot", json={"instruction": "x"}),
        404,
        "label.not_found",
    )


# --- provider failures through the API ------------------------------------------------------------


def test_provider_failures_are_problems(
    root: Api, people: dict[str, Api], model: ModelServer, claude: str
) -> None:
    designer = people["designer"]
    label_id = _label(designer)
    path = f"/labels/{label_id}/copilot"
    wrong = language_model(root, model, "anthropic-messages", key="sk-wrong-key")
    failed = problem(
        designer.post(path, json={"instruction": "x", "credential": wrong["ref"]}),
        502,
        "ai.unauthorized",
    )
    assert "sk-wrong-key" not in json.dumps(failed)

    limited = Answer(429, {"error": {"message": "slow"}}, {"retry-after": "30"})
    model.then(limited)
    response = designer.post(path, json={"instruction": "x"})
    problem(response, 503, "ai.rate_limited")
    assert response.headers["retry-after"] == "30"

    model.then(lambda seen: Answer(200, text_answer(seen, "late").body, delay=AI_TIMEOUT + 1))
    slow = problem(designer.post(path, json={"instruction": "x"}), 502, "ai.unreachable")
    assert slow["params"]["reason"] == "timeout"

    model.then(Answer(200, {"type": "message", "content": "not a list"}))
    problem(designer.post(path, json={"instruction": "x"}), 502, "ai.bad_response")
    assert designer.get(f"/labels/{label_id}").json()["latest_version"] == 2
