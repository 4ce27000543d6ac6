"""The local gateway chooses routes as API Gateway HTTP APIs do."""

from __future__ import annotations

import base64

from etikett.local.gateway import Router, build_event, decode_response
from etikett.local.template import HttpRoute

ROUTES = [
    HttpRoute("GET", "/api/v1/users", "Users"),
    HttpRoute("GET", "/api/v1/users/{userId}", "Users"),
    HttpRoute("GET", "/api/v1/users/me", "Me"),
    HttpRoute("DELETE", "/api/v1/users/{userId}/roles/{role}", "Users"),
    HttpRoute("ANY", "/files/{proxy+}", "Files"),
    HttpRoute("POST", "/mcp", "Mcp"),
    HttpRoute("ANY", "$default", "Misc"),
]


def test_static_segments_beat_path_variables() -> None:
    router = Router(ROUTES)
    assert router.match("GET", "/api/v1/users/me") == (ROUTES[2], {})
    assert router.match("GET", "/api/v1/users/usr_1") == (ROUTES[1], {"userId": "usr_1"})
    assert router.match("DELETE", "/api/v1/users/usr_1/roles/admin") == (
        ROUTES[3],
        {"userId": "usr_1", "role": "admin"},
    )


def test_greedy_variables_take_the_rest_of_the_path() -> None:
    route, params = Router(ROUTES).match("PUT", "/files/a/b/c.png")
    assert route.function == "Files" and params == {"proxy": "a/b/c.png"}


def test_wrong_method_or_unknown_path_falls_to_default() -> None:
    router = Router(ROUTES)
    assert router.match("POST", "/api/v1/users/usr_1")[0].function == "Misc"
    assert router.match("GET", "/mcp")[0].function == "Misc"
    assert router.match("GET", "/nothing/here")[0].function == "Misc"
    assert Router(ROUTES[:-1]).match("GET", "/nothing") is None


def test_variables_do_not_span_segments() -> None:
    assert Router(ROUTES).match("GET", "/api/v1/users/a/b")[0].function == "Misc"


def _scope(method: str, path: str, query: bytes = b"", headers: list | None = None) -> dict:
    return {
        "type": "http",
        "method": method,
        "path": path,
        "query_string": query,
        "headers": headers or [],
        "client": ("127.0.0.1", 5555),
        "http_version": "1.1",
    }


def test_the_event_is_payload_format_2() -> None:
    scope = _scope(
        "POST",
        "/api/v1/users/usr_1",
        b"a=1&a=2&b=",
        [
            (b"Content-Type", b"application/json"),
            (b"Cookie", b"x=1; y=2"),
            (b"X-Multi", b"1"),
            (b"X-Multi", b"2"),
        ],
    )
    event = build_event(scope, b'{"k": 1}', ROUTES[1], {"userId": "usr_1"})
    assert event["version"] == "2.0"
    assert event["routeKey"] == "GET /api/v1/users/{userId}"
    assert event["rawQueryString"] == "a=1&a=2&b="
    assert event["queryStringParameters"] == {"a": "1,2", "b": ""}
    assert event["cookies"] == ["x=1", "y=2"]
    assert event["headers"]["x-multi"] == "1,2" and "cookie" not in event["headers"]
    assert event["pathParameters"] == {"userId": "usr_1"}
    assert event["body"] == '{"k": 1}' and event["isBase64Encoded"] is False
    assert event["requestContext"]["http"]["method"] == "POST"
    assert event["requestContext"]["requestId"]


def test_binary_bodies_travel_base64_encoded_both_ways() -> None:
    scope = _scope("POST", "/files/x", headers=[(b"content-type", b"image/png")])
    event = build_event(scope, b"\x89PNG\x00\xff", ROUTES[4], {"proxy": "x"})
    assert event["isBase64Encoded"] is True
    assert base64.b64decode(event["body"]) == b"\x89PNG\x00\xff"
    status, headers, body = decode_response(
        {
            "statusCode": 200,
            "headers": {"Content-Type": "image/png"},
            "cookies": ["a=b; HttpOnly"],
            "body": base64.b64encode(b"\x00\x01").decode(),
            "isBase64Encoded": True,
        }
    )
    assert status == 200 and body == b"\x00\x01"
    assert (b"set-cookie", b"a=b; HttpOnly") in headers
    assert (b"content-type", b"image/png") in headers
