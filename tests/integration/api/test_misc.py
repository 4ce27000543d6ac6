"""Version and the combined OpenAPI document."""

from __future__ import annotations

from support.client import Api

# operations.md (Authentication, Users, Audit log, getVersion): id -> (roles, human, mcp)
CONTRACT = {
    "listAuditLog": (["admin", "approver"], False, True),
    "getAuditLogEntry": (["admin", "approver"], False, True),
    "login": (None, False, False),
    "logout": (["any"], False, False),
    "getAuthSetup": (None, False, False),
    "postAuthSetup": (None, False, False),
    "createApiToken": (["admin"], False, True),
    "listApiTokens": (["admin"], False, True),
    "deleteApiToken": (["admin"], False, True),
    "getWhoami": (["any"], False, True),
    "postAuthPassword": (["any"], True, True),
    "getVersion": (None, False, True),
    "listUsers": (["admin"], False, True),
    "createUser": (["admin"], False, True),
    "getUser": (["admin"], False, True),
    "postUserRole": (["admin"], False, True),
    "deleteUserRole": (["admin"], False, True),
    "postUserPassword": (["admin"], False, True),
    "postUserDeactivate": (["admin"], False, True),
    "postUserReactivate": (["admin"], False, True),
}


def test_version_needs_no_token(anonymous: Api) -> None:
    response = anonymous.get("/version")
    assert response.status_code == 200
    assert response.json() == {"api_version": "v0.1.0", "build": "local"}


def test_openapi_document_has_every_operation_with_its_access_and_errors(anonymous: Api) -> None:
    spec = anonymous.get("/openapi.json").json()
    assert spec["openapi"].startswith("3.1")
    operations = {op["operationId"]: op for item in spec["paths"].values() for op in item.values()}
    assert set(CONTRACT) <= set(operations)
    for operation_id, (roles, human, mcp) in CONTRACT.items():
        op = operations[operation_id]
        access = op["x-etikett-access"]
        if roles is None:
            assert access["authenticated"] is False, operation_id
            assert op["security"] == []
        else:
            assert access["roles"] == roles and access["human"] is human, operation_id
            assert {"401", "403"} <= set(op["responses"]), operation_id
        assert op["x-etikett-mcp"] is mcp, operation_id
        assert op.get("summary"), operation_id
        for status, response in op["responses"].items():
            if status == "413" and "message" in str(response["content"].get("application/json")):
                continue  # API Gateway's own answer to a body over 10 MB (no function sees it)
            if status.startswith(("4", "5")):
                assert "application/problem+json" in response["content"], (operation_id, status)
    codes = spec["x-etikett-problem-codes"]
    assert {
        "request.malformed",
        "request.invalid",
        "route.not_found",
        "auth.forbidden",
        "auth.unauthenticated",
    } <= set(codes)
    assert "Problem" in spec["components"]["schemas"]
