"""A tool call's HTTP request: path, query and header arguments in place, the body as JSON or as a
multipart form whose file fields carry the decoded bytes; and what comes back as tool results."""

from __future__ import annotations

import base64
import json
from typing import Annotated, Any

import mcp_types as types
import pytest
from fastapi import FastAPI, File, Form, Header, UploadFile

from etikett.api.access import MCP_CALLER_SCOPE_KEY, requires
from etikett.api.app import create_app
from etikett.api.routing import router
from etikett.domain.actors import Caller, Invocation
from etikett.mcp import results
from etikett.mcp.catalog import build, catalog
from etikett.mcp.invoke import PreparedRequest, _call, execute, prepare
from etikett_engine.errors import InvalidRequest

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _upload_app() -> FastAPI:
    app = FastAPI()

    @app.post(
        "/imports/{kind}",
        operation_id="postImport",
        summary="Import an archive",
        openapi_extra={"x-etikett-mcp": True},
    )
    async def post_import(
        kind: str,
        file: UploadFile,
        note: Annotated[str, Form()],
        flags: Annotated[str, Form()] = "{}",
        copies: Annotated[int, Form()] = 1,
        more: Annotated[list[UploadFile], File()] = [],  # noqa: B006 (FastAPI's idiom)
        dry_run: bool = False,
        x_trace: Annotated[str | None, Header()] = None,
    ) -> dict[str, Any]:
        return {
            "kind": kind,
            "file": [file.filename, (await file.read()).decode(), file.content_type],
            "more": [[m.filename, (await m.read()).decode()] for m in more],
            "note": note,
            "flags": json.loads(flags),
            "copies": copies,
            "dry_run": dry_run,
            "trace": x_trace,
        }

    return app


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


async def test_multipart_files_are_sent_as_files_generically() -> None:
    app = _upload_app()
    tool = build(app.openapi()).tools["postImport"]
    assert tool.body is not None and tool.body.file_fields == {"file", "more"}
    arguments = {
        "kind": "label set",
        "dry_run": True,
        "x-trace": "t-1",
        "body": {
            "file": {"name": "labels.csv", "contentBase64": _b64("a;b\n1;2\n")},
            "more": [{"name": "logo.png", "contentBase64": _b64("PNG!")}],
            "note": "Grüße",
            "flags": '{"strict": true}',
            "copies": 2,
        },
    }
    assert tool.argument_errors(arguments) == []
    prepared = prepare(tool, arguments)
    assert prepared.path == "/imports/label%20set"
    assert prepared.params == [("dry_run", "true")]
    assert prepared.headers == {"x-trace": "t-1"}
    assert prepared.data == {"note": "Grüße", "flags": '{"strict": true}', "copies": "2"}
    response = await execute(prepared, "etks_x", "req-1", app=app)
    assert response.status_code == 200, response.content
    assert json.loads(response.content) == {
        "kind": "label set",
        "file": ["labels.csv", "a;b\n1;2\n", "text/csv"],
        "more": [["logo.png", "PNG!"]],
        "note": "Grüße",
        "flags": {"strict": True},
        "copies": 2,
        "dry_run": True,
        "trace": "t-1",
    }


def test_a_file_that_is_not_base64_is_refused_naming_it() -> None:
    tool = build(_upload_app().openapi()).tools["postImport"]
    arguments = {"kind": "k", "body": {"note": "n", "file": {"name": "a", "contentBase64": "%%"}}}
    with pytest.raises(InvalidRequest) as refused:
        prepare(tool, arguments)
    assert refused.value.params["fields"][0]["field"] == "body.file.contentBase64"


def test_json_requests_and_query_values() -> None:
    tools = catalog().tools
    prepared = prepare(
        tools["patchLabelDocument"],
        {"labelId": "lbl_1", "body": {"operations": [], "base_version": 2}},
    )
    assert (prepared.method, prepared.path) == ("PATCH", "/api/v1/labels/lbl_1/document")
    assert prepared.has_json and prepared.json == {"operations": [], "base_version": 2}
    listed = prepare(tools["listLabels"], {"archived": False, "limit": 5, "cursor": None})
    assert listed.params == [("limit", "5"), ("archived", "false")]
    assert not listed.has_json and listed.data is None
    preview = prepare(tools["postLabelPreview"], {"labelId": "lbl_1"})
    assert not preview.has_json  # an optional body left out is not sent


def _text(block: Any) -> Any:
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)


def test_json_answers_are_text_plus_the_status_block() -> None:
    result = results.from_response(
        201,
        {"content-type": "application/json", "location": "/x/1", "content-length": "9"},
        b'{"id": 1}',
    )
    assert not result.is_error
    assert _text(result.content[0]) == {"id": 1}
    assert _text(result.content[1]) == {
        "status": 201,
        "content_type": "application/json",
        "headers": {"Location": "/x/1"},
    }


def test_images_are_image_content() -> None:
    png = b"\x89PNG\r\n\x1a\nrest"
    result = results.from_response(
        200, {"content-type": "image/png", "x-label-dots": "10x20", "x-label-dpi": "203"}, png
    )
    image, block = result.content
    assert isinstance(image, types.ImageContent) and image.mime_type == "image/png"
    assert base64.b64decode(image.data) == png
    assert _text(block)["headers"] == {"X-Label-Dots": "10x20", "X-Label-Dpi": "203"}


def test_failures_are_is_error_with_code_and_params() -> None:
    problem = {
        "type": "https://etikett.dev/problems/label.not_found",
        "title": "Not found",
        "status": 404,
        "detail": "No label lbl_x.",
        "code": "label.not_found",
        "params": {"label_id": "lbl_x"},
    }
    result = results.from_response(
        404, {"content-type": "application/problem+json"}, json.dumps(problem).encode()
    )
    assert result.is_error
    assert _text(result.content[0]) == problem
    assert _text(result.content[1])["status"] == 404
    foreign = results.from_response(502, {"content-type": "text/plain"}, b"bad gateway")
    assert foreign.is_error and _text(foreign.content[0])["code"] == "internal.error"
    empty = results.from_response(204, {}, b"")
    assert not empty.is_error and [_text(b)["status"] for b in empty.content] == [204]
    refused = results.error_result(InvalidRequest.field("body.x", "wrong"))
    assert refused.is_error and len(refused.content) == 1
    assert _text(refused.content[0])["params"]["fields"][0]["field"] == "body.x"
    crashed = results.internal_error("req-9")
    assert _text(crashed.content[0])["params"] == {"request_id": "req-9"}


def _guarded_app() -> Any:
    routes = router(prefix="/api/v1")

    @routes.get("/guarded", operation_id="getGuarded", summary="Designers only")
    def get_guarded(invocation: Annotated[Invocation, requires("designer")]) -> dict[str, Any]:
        caller = invocation.caller
        assert caller is not None
        return {"subject": caller.subject, "actor": caller.actor, "request": invocation.request_id}

    return create_app(routes)


async def test_the_operation_takes_the_caller_the_endpoint_authenticated() -> None:
    """The token is not read a second time: "nonsense" would be refused if it were (401)."""
    app = _guarded_app()
    request = PreparedRequest("GET", "/api/v1/guarded")
    person = Caller(actor="human", subject="ada", roles=frozenset({"designer"}))
    answer = await execute(request, "nonsense", "req-7", person, app=app)
    assert answer.status_code == 200, answer.content
    # Still a service actor through /mcp, with the /mcp request's id for the audit log.
    assert json.loads(answer.content) == {"subject": "ada", "actor": "service", "request": "req-7"}

    viewer = Caller(actor="service", subject="bot", roles=frozenset({"viewer"}))
    refused = await execute(request, "nonsense", "req-8", viewer, app=app)
    assert refused.status_code == 403
    assert json.loads(refused.content)["code"] == "auth.forbidden"

    unauthenticated = await execute(request, "nonsense", "req-9", app=app)
    assert unauthenticated.status_code == 401
    assert json.loads(unauthenticated.content)["code"] == "auth.invalid_token"


async def test_outside_mcp_a_caller_in_the_scope_counts_for_nothing() -> None:
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": "/api/v1/guarded",
        "raw_path": b"/api/v1/guarded",
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"etikett.test")],
        MCP_CALLER_SCOPE_KEY: Caller(actor="human", subject="ada", roles=frozenset({"admin"})),
    }
    answer = await _call(_guarded_app(), scope, b"", head=False)
    assert answer.status_code == 401
    assert json.loads(answer.content)["code"] == "auth.unauthenticated"
