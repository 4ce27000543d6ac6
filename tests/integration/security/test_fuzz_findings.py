"""What the fuzzer found (test_fuzz.py), each as the request it sent: every one answered 500 or
an undocumented status before its fix."""

from __future__ import annotations

from typing import Any

import pytest

from support.client import Api, problem, unique


@pytest.fixture(scope="module")
def document(anonymous: Api) -> dict[str, Any]:
    return anonymous.get("/openapi.json").json()


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/audit-log", "actor"),
        ("/audit-log", "operation"),
        ("/audit-log", "target"),
        ("/print-archive", "job_id"),
        ("/print-archive", "label_id"),
        ("/printers", "runner_id"),
        ("/runners", "group_id"),
        ("/deployments", "flow_id"),
        ("/deployments", "status"),
    ],
)
def test_an_empty_list_filter_is_invalid_not_a_server_error(
    admin: Api, path: str, parameter: str
) -> None:
    body = problem(admin.get(path, params={parameter: ""}), 422, "request.invalid")
    assert body["params"]["fields"][0]["field"] == f"query.{parameter}"


def test_an_empty_flow_runs_filter_is_invalid(admin: Api) -> None:
    flow = admin.post("/flows", json={"name": unique("fuzz")})
    assert flow.status_code == 201, flow.text
    response = admin.get(f"/flows/{flow.json()['id']}/runs", params={"runner_id": ""})
    problem(response, 422, "request.invalid")


def test_empty_audit_filters_of_a_log_question_are_invalid(admin: Api) -> None:
    response = admin.post(
        "/ai/log-qa", json={"question": "Who?", "filters": {"subject": "", "target": ""}}
    )
    fields = problem(response, 422, "request.invalid")["params"]["fields"]
    assert {f["field"] for f in fields} == {"body.filters.subject", "body.filters.target"}


def test_an_empty_id_in_a_body_is_not_found(admin: Api) -> None:
    """DynamoDB refuses an empty key string; no item can have one, so it is simply unknown."""
    group = admin.post("/runner-groups", json={"name": unique("fuzz")}).json()
    response = admin.post(
        "/deployments",
        json={"flow_id": "", "version": 1, "stages": [{"group_ids": [group["id"]]}]},
    )
    problem(response, 404, "flow.version_not_found")


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/labels", {"name": "tiny", "size": {"width_mm": 5e-324, "height_mm": 50}}),
        ("/labels/from-dimensions", {"name": "tiny", "width_mm": 50, "height_mm": 0.5}),
    ],
)
def test_a_label_below_one_millimetre_is_invalid(admin: Api, path: str, body: dict) -> None:
    problem(admin.post(path, json=body), 422, "request.invalid")


def test_a_zpl_label_below_one_millimetre_is_refused_on_import(admin: Api) -> None:
    response = admin.post(
        "/import", params={"dpi": 203}, files={"file": ("tiny.zpl", b"^XA^PW4^LL4^XZ")}
    )
    body = problem(response, 422, "import.size_invalid")
    assert "8 to" in body["detail"]  # 1 mm at 203 dpi is 8 dots


def test_an_api_key_that_no_header_can_carry_is_invalid_and_not_echoed(admin: Api) -> None:
    response = admin.post(
        "/credentials",
        json={
            "ref": unique("fuzz"),
            "kind": "language-model",
            "provider": "openai-chat",
            "model": "m",
            "endpoint": "http://127.0.0.1:9/v1",
            "apiKey": "sk-geheim…",
        },
    )
    body = problem(response, 422, "request.invalid")
    assert body["params"]["fields"][0]["field"].endswith(".apiKey")
    assert "geheim" not in response.text


def test_a_context_parameter_may_be_null(admin: Api) -> None:
    group = admin.post("/runner-groups", json={"name": unique("fuzz")}).json()
    path = f"/runner-groups/{group['id']}/context/empty"
    put = admin.request("PUT", path, json={"value": None})
    assert put.status_code == 200, put.text
    assert put.json()["value"] is None
    listed = admin.get(f"/runner-groups/{group['id']}/context").json()
    assert [(p["name"], p["value"]) for p in listed["items"]] == [("empty", None)]


def test_what_the_service_answers_is_documented(anonymous: Api, document: dict) -> None:
    """A wrong password (401), a body of another type (415) and an unknown credential named to an
    AI operation (404) are answers the document now states."""
    paths = document["paths"]
    wrong = anonymous.post("/auth/login", json={"username": "nobody", "password": "x" * 8})
    problem(wrong, 401, "auth.invalid_credentials")
    assert "401" in paths["/api/v1/auth/login"]["post"]["responses"]
    for path, item in paths.items():
        for method, operation in item.items():
            if "requestBody" in operation:
                assert "415" in operation["responses"], (method, path)
    assert "404" in paths["/api/v1/ai/log-qa"]["post"]["responses"]


def test_a_body_over_the_gateways_limit_is_a_documented_413(admin: Api, document: dict) -> None:
    """Found on the agent channel (a 14 MB flow print): API Gateway, and the local gateway as it,
    answer a body over 10 MB with 413 `{"message"}` before any function sees it. Every
    operation with a body documents it (beside its own 413, if it has one)."""
    huge = admin.post("/print", content=b'{"data": "' + b"x" * (10 * 1024 * 1024) + b'"}')
    assert huge.status_code == 413 and huge.json() == {"message": "Request Entity Too Large"}
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if "requestBody" in operation:
                content = operation["responses"]["413"]["content"]
                assert "application/json" in content, (method, path)
    own = document["paths"]["/api/v1/print"]["post"]["responses"]["413"]
    assert set(own["content"]) == {"application/problem+json", "application/json"}
    assert "print.too_many_records" in own["description"]


def test_an_unknown_credential_named_to_an_ai_operation_is_not_found(admin: Api) -> None:
    response = admin.post("/ai/log-qa", json={"question": "Who?", "credential": "nope"})
    problem(response, 404, "credential.not_found")


@pytest.mark.parametrize("bound", ["until", "since"])
def test_an_audit_time_before_1970_bounds_the_log_instead_of_failing(
    admin: Api, bound: str
) -> None:
    response = admin.get("/audit-log", params={bound: "0207-04-28T09:01:46-17:04", "limit": 1})
    assert response.status_code == 200, response.text
    assert (response.json()["items"] == []) is (bound == "until")


def test_cel_evaluation_for_an_unknown_label_is_documented_not_found(
    admin: Api, document: dict
) -> None:
    response = admin.post("/cel/evaluate", json={"expression": "1", "label_id": "lbl_nope"})
    problem(response, 404, "label.not_found")
    assert "404" in document["paths"]["/api/v1/cel/evaluate"]["post"]["responses"]
