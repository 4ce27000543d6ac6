"""The combined OpenAPI 3.1 document of all groups: operations, access rules, problem catalog."""

from __future__ import annotations

from functools import cache
from typing import Any

from fastapi.openapi.utils import get_openapi

from etikett import API_VERSION
from etikett.api import problems
from etikett.api.app import create_app
from etikett.api.groups import all_routes

DESCRIPTION = """Etikett designs labels, automates label printing, deploys automations to on-site
Runners and manages print jobs and their outcomes.

Authenticate with `Authorization: Bearer <token>`: a session token from `login`, or a
service-account token from `createApiToken`. Every operation states its roles in
`x-etikett-access` (`admin` may do everything). Errors are RFC 9457 problem details with a stable
`code`; the catalog is `x-etikett-problem-codes`. Lists take `limit` (1..200, default 50) and
`cursor`, and answer `{"items": [...], "next_cursor": ...}`."""


@cache
def document() -> dict[str, Any]:
    app = create_app(*all_routes())
    spec = get_openapi(
        title="Etikett",
        version=API_VERSION,
        openapi_version="3.1.0",
        description=DESCRIPTION,
        routes=app.routes,
    )
    components = spec.setdefault("components", {})
    schemas = components.setdefault("schemas", {})
    schemas["Problem"] = problems.Problem.model_json_schema(
        ref_template="#/components/schemas/{model}"
    )
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)
    components["securitySchemes"] = {
        "bearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "Session token (login) or service-account token.",
        },
        "session": {
            "type": "apiKey",
            "in": "cookie",
            "name": "etikett_session",
            "description": "The browser console's session cookie.",
        },
    }
    for path_item in spec.get("paths", {}).values():
        for operation in path_item.values():
            access = operation.get("x-etikett-access", {})
            operation["security"] = (
                [{"bearer": []}, {"session": []}] if access.get("authenticated") else []
            )
    spec["x-etikett-problem-codes"] = problems.catalog()
    spec["servers"] = [{"url": "/"}]
    return spec
