"""The role matrix: every operation of the route table × every role (designer, operator,
approver, admin, none) × every kind of actor (a person's session, a service-account token, an MCP
`tools/call`), checked against the operation contract as the specification writes it
(`docs/contract/operations.md`, the specification's `shared/spec/operations.md` kept in the
repository; its tables are parsed here, not restated).

A call that the contract allows must get past authorization: any answer but 401/403 (the dummy
ids and empty bodies used here stop at 404 or 422, which is fine; what matters is that the door
opened), or 403 `policy.human_required` where the contract (or issue 18 for user management)
makes an agent ask a person. A call it does not allow gets 403 `auth.forbidden`, or
`auth.human_required` where only a person may act, and no token at all gets 401. `tools/list`
shows each caller exactly the MCP operations its roles allow; MCP-no operations are never tools.
"""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from integration.mcp.client import RawMcp
from support.client import Api
from support.contract import contract
from support.server import DevServer

CONTRACT = contract()
BY_ID = {operation.operation_id: operation for operation in CONTRACT}
ROLE_COLUMNS = ("designer", "operator", "approver", "admin", "none")

# Published operations the contract's tables do not list, each with why it may exist.
BEYOND_CONTRACT = {
    "getOpenApiDocument": "the published OpenAPI document itself (svc://openapi in MCP)",
    "deleteRunner": "removing a Runner (docs/concepts/runners.md); admin only",
    "putRunnerGroupPrinterPorts": "the printer ports a group's Runners may reach besides 9100, "
    "6101 and 515 (docs/guides/security.md); admin only",
    "listRunnerDiscoveryFindings": "the findings a Runner's discoveries made, whose ids "
    "createPrinter adopts (docs/concepts/runners.md); operators, like the discovery itself",
    "getSchema": "the document schemas of svc://schema/* over REST, for forms generated from "
    "them (docs/guides/label-designer.md); any caller",
    "postLabelLayout": "an unsaved label document laid out for the designer: raster, object "
    "boxes, findings (docs/guides/label-designer.md); any caller, as a preview",
    "putDeploymentOfflinePolicy": "whether a deployment's Runners print while the service is "
    "away, and its bounds (docs/concepts/offline-sites.md, issue 27); operators, like the "
    "deployment's context",
}
AGENT_CHANNEL = "/api/v1/runner-agent/"  # "added": the Runner's channel, shape by design

# Where an agent holding the role is sent to a person by the approval policy (403
# `policy.human_required`): the contract's "human while the policy is on" rows, and user and
# token management, which issue 18 (finding 4) puts behind a human session while the policy is
# on (creating users, granting roles, resetting passwords and reactivating accounts: a token
# must not mint a human). Taking a role away, deactivating a user and issuing service tokens stay
# open to agents: locking someone out never waits for a person, and a token mints no human.
POLICY_BOUND = {op.operation_id for op in CONTRACT if op.human_by_policy} | {
    "createUser",
    "postUserRole",
    "postUserPassword",
    "postUserReactivate",
}
REFUSED = {401, 403}
UNAUTHENTICATED = "auth.unauthenticated"


@dataclass(frozen=True)
class Actor:
    role: str  # one of ROLE_COLUMNS
    kind: str  # "human" (session) or "service" (token)
    token: str

    @property
    def roles(self) -> frozenset[str]:
        return frozenset() if self.role == "none" else frozenset({self.role})

    def __str__(self) -> str:
        return f"{self.role}/{self.kind}"


@pytest.fixture(scope="module")
def document(anonymous: Api) -> dict[str, Any]:
    response = anonymous.get("/openapi.json")
    assert response.status_code == 200, response.text
    return response.json()


@pytest.fixture(scope="module")
def published(document: dict[str, Any]) -> dict[str, tuple[str, str, dict[str, Any]]]:
    """operationId -> (method, path, operation) of the served document."""
    return {
        operation["operationId"]: (method.upper(), path, operation)
        for path, item in document["paths"].items()
        for method, operation in item.items()
    }


@pytest.fixture(scope="module")
def actors(admin: Api) -> list[Actor]:
    """A person with each role (and one with none), and a service token for each role."""
    made = []
    for role in ROLE_COLUMNS:
        _, session = admin.user_session([] if role == "none" else [role])
        assert session.token
        made.append(Actor(role, "human", session.token))
        if role != "none":
            made.append(Actor(role, "service", admin.service_token(role)["token"]))
    return made


def test_a_service_token_without_a_role_cannot_be_issued(admin: Api) -> None:
    """So the "none" column of service actors is empty by construction."""
    for body in ({"subject": "nobody"}, {"subject": "nobody", "role": None}):
        assert admin.post("/auth/tokens", json=body).status_code == 422


def test_the_published_rules_are_the_contracts(
    published: dict[str, tuple[str, str, dict[str, Any]]],
) -> None:
    """Each contract row is published at its method and path with its roles, its human rule and
    its MCP flag; each published operation is in the contract or named above with a reason."""
    for op in CONTRACT:
        assert op.operation_id in published, f"{op.operation_id} is not published"
        method, path, operation = published[op.operation_id]
        assert (method, path) == (op.method, op.path), op.operation_id
        access = operation["x-etikett-access"]
        assert operation["x-etikett-mcp"] is op.mcp, op.operation_id
        if op.public:
            assert access["authenticated"] is False, op.operation_id
            continue
        assert access["authenticated"] is True and not access.get("via"), op.operation_id
        assert access["human"] is op.human, op.operation_id
        if op.roles is None:
            assert access["roles"] == ["any"], op.operation_id
        else:
            # "admin may do everything": a rule may name it or not.
            assert set(access["roles"]) - {"admin"} == op.roles - {"admin"}, op.operation_id
    extra = {
        name: path
        for name, (_, path, _) in published.items()
        if name not in BY_ID and not path.startswith(AGENT_CHANNEL)
    }
    assert set(extra) == set(BEYOND_CONTRACT), extra


# --- REST: sessions and service tokens -------------------------------------------------------


def _dummy(schema: dict[str, Any]) -> Any:
    if "enum" in schema:
        return schema["enum"][0]
    for alternative in schema.get("anyOf", []):
        if alternative.get("type") != "null":
            return _dummy(alternative)
    return 1 if schema.get("type") == "integer" else "matrix_nope"


def request_for(path: str, operation: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A request that reaches the operation's access rule: path parameters filled with values
    of their type, required query parameters too, and `{}` as a JSON body. Such a request
    names nothing that exists and carries no fields, so any call that passes authorization
    stops at 404 or 422 and changes nothing."""
    query = {}
    for parameter in operation.get("parameters", []):
        value = _dummy(parameter.get("schema", {}))
        if parameter["in"] == "path":
            path = path.replace("{" + parameter["name"] + "}", str(value))
        elif parameter["in"] == "query" and parameter.get("required"):
            query[parameter["name"]] = value
    kwargs: dict[str, Any] = {"params": query}
    content = operation.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        kwargs["json"] = {}
    return path, kwargs


def expected_refusal(
    operation_id: str, access: dict[str, Any], roles: frozenset[str], kind: str
) -> str | None:
    """The problem code a caller must get, or None when it must get past authorization."""
    op = BY_ID.get(operation_id)
    if op is not None:
        if op.public:
            return None
        if not op.permits_role(roles):
            return "auth.forbidden"
        return "auth.human_required" if op.human and kind == "service" else None
    # Beyond the contract: by the published rule.
    if not access["authenticated"]:
        return None
    if access.get("via"):
        return "runner.certificate_required"
    rule = set(access["roles"])
    if "any" not in rule and "admin" not in roles and not rule & roles:
        return "auth.forbidden"
    return "auth.human_required" if access["human"] and kind == "service" else None


def _problem_code(response: httpx.Response) -> str | None:
    if not response.headers.get("content-type", "").startswith("application/problem+json"):
        return None
    return response.json().get("code")


OPERATION_IDS = sorted(BY_ID) + sorted(BEYOND_CONTRACT)


@pytest.fixture(scope="module")
def http(dev_server: DevServer) -> httpx.Client:
    return httpx.Client(base_url=dev_server.url, timeout=30)


@pytest.mark.parametrize("operation_id", OPERATION_IDS)
def test_rest_callers_pass_or_are_refused_as_the_contract_says(
    operation_id: str,
    published: dict[str, tuple[str, str, dict[str, Any]]],
    actors: list[Actor],
    http: httpx.Client,
    admin: Api,
) -> None:
    method, path, operation = published[operation_id]
    access = operation["x-etikett-access"]
    url, kwargs = request_for(path, operation)
    wrong = []

    def check(caller: str, response: httpx.Response, refusal: str | None, kind: str) -> None:
        code, status = _problem_code(response), response.status_code
        if status >= 500:
            wrong.append(f"{caller}: {status} {response.text[:200]}")
        elif refusal is None:
            policy = (
                status == 403
                and code == "policy.human_required"
                and kind == "service"
                and operation_id in POLICY_BOUND
            )
            if status in REFUSED and not policy:
                wrong.append(f"{caller}: refused {status} {code}, the contract allows it")
        elif code != refusal or status not in REFUSED:
            wrong.append(f"{caller}: {status} {code}, expected {refusal}")

    def send(actor: Actor) -> httpx.Response:
        token = actor.token
        if operation_id == "logout" and actor.kind == "human":
            token = _fresh_session(admin, actor)  # logout ends the session it is sent with
        return http.request(method, url, headers={"Authorization": f"Bearer {token}"}, **kwargs)

    with ThreadPoolExecutor(len(actors)) as pool:
        responses = list(pool.map(send, actors))
    for actor, response in zip(actors, responses, strict=True):
        refusal = expected_refusal(operation_id, access, actor.roles, actor.kind)
        check(str(actor), response, refusal, actor.kind)
    anonymous = http.request(method, url, **kwargs)
    check("no token", anonymous, None if access["authenticated"] is False else UNAUTHENTICATED, "")
    assert not wrong, "\n".join(wrong)


def test_the_agent_channel_refuses_every_token(
    published: dict[str, tuple[str, str, dict[str, Any]]], actors: list[Actor], http: httpx.Client
) -> None:
    """The Runner's channel takes its client certificate only: no user or agent token opens it."""
    channel = {
        name: value for name, value in published.items() if value[1].startswith(AGENT_CHANNEL)
    }
    assert len(channel) >= 5
    for name, (method, path, operation) in channel.items():
        url, kwargs = request_for(path, operation)
        for actor in [*actors, None]:
            headers = {"Authorization": f"Bearer {actor.token}"} if actor else {}
            response = http.request(method, url, headers=headers, **kwargs)
            assert response.status_code == 401, (name, str(actor), response.text)
            assert _problem_code(response) == "runner.certificate_required", (name, response.text)


def _fresh_session(admin: Api, actor: Actor) -> str:
    user = admin.create_user(sorted(actor.roles))
    return admin.login(user["username"])


# --- MCP ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mcp_callers(actors: list[Actor]) -> list[Actor]:
    """Who calls through MCP: each role's service token, and the sessions of the person without
    roles and of the admin (through MCP a session token is an agent too)."""
    return [a for a in actors if a.kind == "service" or a.role in ("none", "admin")]


def _rpc(url: str, token: str, method: str, params: dict[str, Any]) -> dict[str, Any]:
    response = RawMcp(url, token).post(method, params)
    assert response.status_code == 200, response.text
    return response.json()["result"]


@pytest.fixture(scope="module")
def tool_schemas(dev_server: DevServer, actors: list[Actor]) -> dict[str, dict[str, Any]]:
    admin_token = next(a.token for a in actors if a.role == "admin" and a.kind == "service")
    listed = _rpc(f"{dev_server.url}/mcp", admin_token, "tools/list", {})
    return {tool["name"]: tool["inputSchema"] for tool in listed["tools"]}


def test_tools_list_shows_exactly_the_permitted_operations(
    dev_server: DevServer,
    mcp_callers: list[Actor],
    tool_schemas: dict[str, dict[str, Any]],
    published: dict[str, tuple[str, str, dict[str, Any]]],
) -> None:
    """By the contract's roles; an operation only a person may do is listed for its roles (an
    agent learns it exists) and refused when called. MCP-no operations are never listed."""
    never = {op.operation_id for op in CONTRACT if not op.mcp}
    beyond = {name for name in BEYOND_CONTRACT if published[name][2]["x-etikett-mcp"]}
    assert set(tool_schemas) == {op.operation_id for op in CONTRACT if op.mcp} | beyond
    for actor in mcp_callers:
        listed = _rpc(f"{dev_server.url}/mcp", actor.token, "tools/list", {})
        names = {tool["name"] for tool in listed["tools"]}
        expected = {op.operation_id for op in CONTRACT if op.mcp and op.permits_role(actor.roles)}
        expected |= {
            name
            for name in beyond
            if expected_refusal(name, published[name][2]["x-etikett-access"], actor.roles, "human")
            is None
        }
        assert names == expected, (str(actor), names ^ expected)
        assert not names & never


@pytest.mark.parametrize("operation_id", sorted(op.operation_id for op in CONTRACT if not op.mcp))
def test_an_mcp_no_operation_cannot_be_called_as_a_tool(
    operation_id: str, dev_server: DevServer, actors: list[Actor]
) -> None:
    admin_token = next(a.token for a in actors if a.role == "admin" and a.kind == "service")
    result = _rpc(
        f"{dev_server.url}/mcp",
        admin_token,
        "tools/call",
        {"name": operation_id, "arguments": {}},
    )
    assert result["isError"] is True
    problem = json.loads(result["content"][0]["text"])
    if BY_ID[operation_id].human:
        # Left out because only a person may do it: the call says so (it never runs).
        assert problem["code"] == "auth.human_required" and problem["status"] == 403, problem
    else:
        assert problem["code"] == "request.invalid" and "No tool is named" in problem["detail"]


def tool_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments of the right types for the tool's required path and query parameters, and
    `{}` as its body; they name nothing that exists."""
    arguments: dict[str, Any] = {}
    for name in schema.get("required", []):
        if name == "body":
            arguments[name] = {}
        else:
            arguments[name] = _dummy(schema["properties"][name])
    return arguments


@pytest.mark.parametrize("operation_id", sorted(op.operation_id for op in CONTRACT if op.mcp))
def test_mcp_calls_pass_or_are_refused_as_the_contract_says(
    operation_id: str,
    dev_server: DevServer,
    mcp_callers: list[Actor],
    tool_schemas: dict[str, dict[str, Any]],
) -> None:
    op = BY_ID[operation_id]
    arguments = tool_arguments(tool_schemas[operation_id])
    wrong = []
    with ThreadPoolExecutor(len(mcp_callers)) as pool:
        results = pool.map(
            lambda actor: _rpc(
                f"{dev_server.url}/mcp",
                actor.token,
                "tools/call",
                {"name": operation_id, "arguments": arguments},
            ),
            mcp_callers,
        )
    for actor, result in zip(mcp_callers, results, strict=True):
        blocks = [json.loads(block["text"]) for block in result["content"] if "text" in block]
        code = blocks[0].get("code") if result["isError"] and blocks else None
        status = blocks[-1].get("status") if blocks and "status" in blocks[-1] else None
        # Through MCP every caller is an agent.
        refusal = expected_refusal(operation_id, {}, actor.roles, "service")
        if code == "internal" or (status or 0) >= 500:
            wrong.append(f"{actor} via MCP: {blocks}")
        elif refusal is None:
            policy = code == "policy.human_required" and operation_id in POLICY_BOUND
            if (code or "").startswith("auth.") or (status in REFUSED and not policy):
                wrong.append(f"{actor} via MCP: refused {status} {code}, the contract allows it")
        elif code != refusal:
            wrong.append(f"{actor} via MCP: {status} {code}, expected {refusal}")
    assert op.mcp
    assert not wrong, "\n".join(wrong)
