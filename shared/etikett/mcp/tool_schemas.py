"""What a tool's input schema is made of besides the operation's own: file objects in place of
multipart binaries (`{name, contentBase64}`), and the OpenAPI document's `$ref`s inlined (a
recursive schema kept once, under the tool schema's own `$defs`)."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any


class CatalogError(ValueError):
    """The OpenAPI document has an operation that cannot become a tool."""


# Keywords whose values are data, not schemas: a `$ref` key inside them is not a reference.
_DATA_KEYWORDS = frozenset({"const", "default", "enum", "example", "examples"})
LOCAL_DEFS = "#/$defs/"  # references into the tool schema's own definitions (recursive schemas)

FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "A file: its name and its content, base64-encoded. Sent as a multipart file.",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 255},
        "contentBase64": {"type": "string", "contentEncoding": "base64"},
    },
    "required": ["name", "contentBase64"],
    "additionalProperties": False,
}


# --- file fields -------------------------------------------------------------------------------


def _is_binary(schema: Any) -> bool:
    if not isinstance(schema, Mapping) or schema.get("type") != "string":
        return False
    return schema.get("format") == "binary" or (
        "contentMediaType" in schema and "contentEncoding" not in schema
    )


def _as_file_object(schema: Any) -> Any:
    """A binary string (or a list of them, or either nullable) with file objects in its place."""
    if _is_binary(schema):
        return _file_schema(schema)
    if isinstance(schema, Mapping):
        if schema.get("type") == "array" and _is_binary(schema.get("items")):
            return {**schema, "items": _file_schema(schema["items"])}
        for keyword in ("anyOf", "oneOf"):
            options = schema.get(keyword)
            if isinstance(options, list):
                converted = [_as_file_object(option) for option in options]
                if converted != options:
                    return {**schema, keyword: converted}
    return schema


def _file_schema(binary: Mapping[str, Any]) -> dict[str, Any]:
    schema = copy.deepcopy(FILE_SCHEMA)
    if binary.get("description"):
        schema["description"] = f"{binary['description']} {schema['description']}"
    return schema


def with_file_objects(schema: dict[str, Any]) -> tuple[dict[str, Any], frozenset[str]]:
    properties = dict(schema.get("properties") or {})
    files = set()
    for field_name, field_schema in properties.items():
        converted = _as_file_object(field_schema)
        if converted is not field_schema:
            properties[field_name] = converted
            files.add(field_name)
    return {**schema, "properties": properties}, frozenset(files)


# --- references --------------------------------------------------------------------------------


class Resolver:
    """Inlines `#/components/...` references. A schema that contains itself cannot be inlined: it
    goes to the tool schema's own `$defs` and is referenced there, so no reference dangles."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        self._document = document
        self._recursive: dict[str, str] = {}  # component pointer -> name in $defs

    def resolve(self, value: Any, stack: tuple[str, ...] = ()) -> Any:
        if isinstance(value, list):
            return [self.resolve(item, stack) for item in value]
        if not isinstance(value, Mapping):
            return value
        reference = value.get("$ref")
        if isinstance(reference, str) and not reference.startswith(LOCAL_DEFS):
            siblings = {k: self.resolve(v, stack) for k, v in value.items() if k != "$ref"}
            if reference in stack:
                name = self._recursive.setdefault(reference, reference.rsplit("/", 1)[-1])
                return {"$ref": LOCAL_DEFS + name, **siblings}
            target = self.resolve(self._target(reference), (*stack, reference))
            if not isinstance(target, dict):
                raise CatalogError(f"{reference} is not an object")
            return {**target, **siblings}
        return {
            key: item if key in _DATA_KEYWORDS else self.resolve(item, stack)
            for key, item in value.items()
        }

    def definitions(self) -> dict[str, Any]:
        done: dict[str, Any] = {}
        while len(done) < len(self._recursive):
            for reference, name in list(self._recursive.items()):
                if name not in done:
                    done[name] = self.resolve(self._target(reference), (reference,))
        return done

    def _target(self, reference: str) -> Any:
        if not reference.startswith("#/"):
            raise CatalogError(f"only local references can be resolved, not {reference}")
        node: Any = self._document
        for part in reference[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, Mapping) or part not in node:
                raise CatalogError(f"{reference} points nowhere")
            node = node[part]
        return node


def references(schema: Any) -> Iterable[str]:
    """Every `$ref` in a schema (tests use it to show none dangles)."""
    if isinstance(schema, list):
        for item in schema:
            yield from references(item)
    elif isinstance(schema, Mapping):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                yield value
            elif key not in _DATA_KEYWORDS:
                yield from references(value)
