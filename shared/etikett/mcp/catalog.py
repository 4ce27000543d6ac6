"""The tool catalog, generated from the OpenAPI document: one tool per operation marked
`x-etikett-mcp`, named by its operationId. Path, query and header parameters become top-level
arguments, the request body goes under `body` with every `$ref` resolved, and a multipart file field
becomes `{name, contentBase64}`. Built once per cold start (`catalog()`), never per request.

Each tool's access rule is the one its operation publishes (`x-etikett-access`, written from the
route's own rule), so listing tools needs no route loaded; a call meets the route's rule itself."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, Literal

from etikett.api.access import Access
from etikett.domain.actors import Caller
from etikett.mcp.tool_schemas import FILE_SCHEMA as FILE_SCHEMA
from etikett.mcp.tool_schemas import CatalogError as CatalogError
from etikett.mcp.tool_schemas import Resolver, with_file_objects
from etikett.mcp.tool_schemas import references as references
from etikett_engine.errors import Forbidden, ProblemCode

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator, ValidationError

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
ARGUMENT_LOCATIONS = ("path", "query", "header")
BODY = "body"
JSON_MEDIA_TYPE = "application/json"
MULTIPART = "multipart/form-data"
FORM = "application/x-www-form-urlencoded"
HUMAN_ONLY_NOTE = (
    "Only a person signed in with a session may do this. Every MCP request is an agent's (a "
    "service actor), so a call is refused with `auth.human_required`: ask a person to do it."
)


@dataclass(frozen=True)
class Argument:
    """A top-level argument that travels as a path, query or header parameter."""

    name: str
    location: Literal["path", "query", "header"]
    required: bool


@dataclass(frozen=True)
class Body:
    """How the `body` argument travels: JSON, or form fields with `file_fields` as files."""

    media_type: str
    required: bool
    file_fields: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ToolSpec:
    """One tool: the operation it runs and the schema its arguments must fit."""

    name: str
    title: str
    description: str
    method: str
    path: str
    arguments: tuple[Argument, ...]
    body: Body | None
    input_schema: dict[str, Any]
    access: Access = field(compare=False)
    group: str | None = None  # the group whose routes run the operation

    @cached_property
    def validator(self) -> Draft202012Validator:
        # Made on the tool's first call: jsonschema is not needed to list tools.
        from jsonschema import Draft202012Validator

        return Draft202012Validator(self.input_schema)

    def visible_to(self, caller: Caller) -> bool:
        """Whether `tools/list` shows this tool to `caller` (always a service actor here).

        The operation's own rule decides. An operation only a person may do is still listed for
        the roles it needs, so that an agent learns it exists; calling it is refused with
        `auth.human_required` by the same rule, at call time.
        """
        service = caller._replace(actor="service")
        if self.access.permits(service):
            return True
        return self.access.human and self.access.permits(service._replace(actor="human"))

    def argument_errors(self, arguments: Mapping[str, Any]) -> list[dict[str, str]]:
        """Every way `arguments` miss the input schema, as `request.invalid` fields."""
        fields = []
        for error in map(_most_specific, self.validator.iter_errors(dict(arguments))):
            path = [str(part) for part in error.absolute_path]
            kind = str(error.validator)
            if kind == "required":
                missing = [name for name in error.validator_value if name not in error.instance]
                path += missing[:1]
            elif kind == "additionalProperties" and isinstance(error.instance, Mapping):
                allowed = (error.schema or {}).get("properties", {})
                extra = [name for name in error.instance if name not in allowed]
                path += [str(name) for name in extra[:1]]
            fields.append(
                {
                    "field": ".".join(path) or "arguments",
                    # jsonschema quotes the value; a secret (`writeOnly`) is never quoted back.
                    "message": f"the value does not fit `{kind}` (a secret: not shown)"
                    if _write_only(self.input_schema, error)
                    else error.message,
                    "type": kind,
                }
            )
        return sorted(fields, key=lambda item: item["field"])


def _write_only(schema: Any, error: ValidationError) -> bool:
    """Whether any schema on the way to the failing one marks a secret (`writeOnly`)."""
    node = schema
    for part in error.absolute_schema_path:
        if isinstance(node, Mapping) and node.get("writeOnly"):
            return True
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return False
    return isinstance(node, Mapping) and bool(node.get("writeOnly"))


def _most_specific(error: ValidationError) -> ValidationError:
    """Into `anyOf`/`oneOf`: the deepest error of a branch whose type fits the argument, so that
    `body.variables` is named rather than "body is not valid under any of the given schemas"."""
    while error.context:
        here = list(error.absolute_path)
        candidates = [
            e
            for e in error.context
            if not (e.validator == "type" and list(e.absolute_path) == here)
        ]
        if not candidates:
            break
        error = max(candidates, key=lambda e: len(e.absolute_path))
    return error


@dataclass(frozen=True)
class Catalog:
    tools: dict[str, ToolSpec]
    # Operations outside the catalog because only a person may do them (`human` and not in MCP):
    # a call naming one is refused by its own rule (`auth.human_required`), which tells an agent
    # to ask a person where "no such tool" would not.
    person_only: dict[str, Access] = field(default_factory=dict)

    def visible_to(self, caller: Caller) -> list[ToolSpec]:
        return [tool for tool in self.tools.values() if tool.visible_to(caller)]

    def input_schema(self, name: str) -> dict[str, Any] | None:
        tool = self.tools.get(name)
        return tool.input_schema if tool else None


@cache
def catalog() -> Catalog:
    """The catalog of the service's own OpenAPI document, built once per process (cold start)."""
    # The OpenAPI module (and in local mode every group's routes) loads with the first catalog.
    from etikett.api.openapi import document, operation_groups

    return build(document(), operation_groups())


def build(document: Mapping[str, Any], groups: Mapping[str, str] | None = None) -> Catalog:
    """The tools of `document`, each with its operation's group from `groups` (by operationId)."""
    tools: dict[str, ToolSpec] = {}
    person_only: dict[str, Access] = {}
    for path, method, operation in _operations(document):
        if operation.get("x-etikett-mcp") is not True:
            described = operation.get("x-etikett-access") or {}
            if operation.get("operationId") and described.get("human"):
                person_only[str(operation["operationId"])] = access_rule(described)
            continue
        tool = _tool(document, path, method, operation)
        if groups is not None:
            if tool.name not in groups:
                raise CatalogError(f"no group serves {tool.name}")
            tool = replace(tool, group=groups[tool.name])
        if tool.name in tools:
            raise CatalogError(f"operationId {tool.name} is used twice")
        tools[tool.name] = tool
    return Catalog(tools, person_only)


class _Nobody(Access):
    """A rule met by a credential other than a token (a Runner certificate, an enrollment
    token): no MCP caller ever meets it."""

    def __init__(self) -> None:
        super().__init__(frozenset())

    def permits(self, caller: Caller) -> bool:
        return False

    def refusal(self, caller: Caller, operation_id: str) -> Forbidden | None:
        return Forbidden(
            f"{operation_id} takes no token.", ProblemCode.AUTH_FORBIDDEN, operation_id=operation_id
        )


def access_rule(described: Mapping[str, Any]) -> Access:
    """The `Access` rule an operation publishes as `x-etikett-access`, as an object again."""
    if described.get("via"):
        return _Nobody()
    if not described.get("authenticated", True):
        return Access(None, authenticated=False)
    roles = list(described.get("roles") or ["any"])
    return Access(
        None if roles == ["any"] else frozenset(roles), human=bool(described.get("human"))
    )


def _operations(document: Mapping[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in (document.get("paths") or {}).items():
        for method in HTTP_METHODS:
            if method in item:
                yield path, method.upper(), item[method]


def _tool(
    document: Mapping[str, Any],
    path: str,
    method: str,
    operation: Mapping[str, Any],
) -> ToolSpec:
    name = operation.get("operationId")
    if not name:
        raise CatalogError(f"{method} {path} has no operationId")
    resolver = Resolver(document)
    properties: dict[str, Any] = {}
    required: list[str] = []
    arguments: list[Argument] = []
    for parameter in operation.get("parameters") or []:
        parameter = resolver.resolve(parameter)
        location = parameter.get("in")
        if location not in ARGUMENT_LOCATIONS:
            continue  # cookies never reach the MCP endpoint's operations
        argument = Argument(parameter["name"], location, bool(parameter.get("required")))
        if argument.name in properties or argument.name == BODY:
            raise CatalogError(f"{name}: argument {argument.name!r} is defined twice")
        schema = dict(parameter.get("schema") or {})
        schema.pop("title", None)  # FastAPI's "Labelid" says less than the name itself
        if parameter.get("description") and "description" not in schema:
            schema["description"] = parameter["description"]
        properties[argument.name] = schema
        arguments.append(argument)
        if argument.required:
            required.append(argument.name)

    body = None
    request_body = resolver.resolve(operation.get("requestBody") or {})
    if request_body:
        media_type, schema = _body_schema(name, request_body)
        schema.pop("title", None)
        file_fields: frozenset[str] = frozenset()
        if media_type == MULTIPART:
            schema, file_fields = with_file_objects(schema)
        body = Body(media_type, bool(request_body.get("required")), file_fields)
        properties[BODY] = schema
        if body.required:
            required.append(BODY)

    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": properties,
        "additionalProperties": False,
    }
    if required:
        input_schema["required"] = required
    definitions = resolver.definitions()
    if definitions:
        input_schema["$defs"] = definitions
    access = access_rule(operation.get("x-etikett-access") or {})
    summary = str(operation.get("summary") or name)
    return ToolSpec(
        name=name,
        title=summary,
        description=_description(operation, access),
        method=method,
        path=path,
        arguments=tuple(arguments),
        body=body,
        input_schema=input_schema,
        access=access,
    )


def _description(operation: Mapping[str, Any], access: Access) -> str:
    parts = [str(operation.get("summary") or "").strip(), str(operation.get("description") or "")]
    text = "\n\n".join(part.strip() for part in parts if part.strip())
    if not text.endswith((".", ")", "!", "?")):
        text += "."
    if access.human:
        text += "\n\n" + HUMAN_ONLY_NOTE
    return text


def _body_schema(name: str, request_body: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The media type and schema of an already resolved request body."""
    content = request_body.get("content") or {}
    for media_type in (JSON_MEDIA_TYPE, MULTIPART, FORM):
        if media_type in content:
            return media_type, dict((content[media_type] or {}).get("schema") or {})
    raise CatalogError(f"{name}: no request body type an MCP tool can send ({sorted(content)})")
