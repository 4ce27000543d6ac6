"""Editing documents (labels, forms, flows): RFC 6902 patches, the rule that object ids are
kept, and validation failures that name the JSON path of each problem.

A patch is bounded while it runs, not after: at most `MAX_PATCH_OPERATIONS` operations, and the
document's size is accounted after every operation (what an `add`, `replace` or `copy` brings in,
what a `remove` takes out), so a `copy` that doubles the document is refused at the operation
that crosses `MAX_PATCHED_DOCUMENT_CHARS`, before the next one can double it again."""

import copy
import json
from collections.abc import Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from etikett_engine.errors import (
    DocumentInvalid,
    IdChanged,
    PatchFailed,
    PayloadTooLarge,
    ProblemCode,
)
from etikett_engine.model import Model

M = TypeVar("M", bound=BaseModel)

MAX_PATCH_OPERATIONS = 1000
# Characters of the document as compact JSON. A stored version is at most 350 KB compressed;
# its largest honest content (inline images, base64) compresses little, so 8 MB leaves room.
MAX_PATCHED_DOCUMENT_CHARS = 8_000_000


class DocumentPatch(Model):
    model_config = ConfigDict(extra="forbid")
    operations: list[dict[str, Any]] = Field(
        max_length=MAX_PATCH_OPERATIONS,
        description="RFC 6902 JSON Patch operations, applied in order; the document may not "
        f"grow past {MAX_PATCHED_DOCUMENT_CHARS} characters of JSON on the way "
        "(413 `document.too_large`).",
        examples=[[{"op": "replace", "path": "/objects/0/content", "value": "Hello"}]],
    )
    base_version: int | None = Field(
        default=None,
        ge=0,
        description="The version the patch was made against; refused (409) if a newer exists.",
    )
    comment: str | None = Field(default=None, max_length=1000)


def _pointer_token(part: Any) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def json_path(loc: Sequence[Any], data: Any) -> str:
    """A pydantic error location as a JSON pointer into `data`, dropping union tags."""
    parts: list[str] = []
    node = data
    for part in loc:
        if isinstance(node, dict):
            if part in node:
                node = node[part]
                parts.append(_pointer_token(part))
            elif node.get("type") == part:
                continue  # the discriminator tag pydantic inserts for tagged unions
            else:
                node = None
                parts.append(_pointer_token(part))
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            parts.append(str(part))
        else:
            node = None
            parts.append(_pointer_token(part))
    return "/" + "/".join(parts) if parts else ""


def validate(model: type[M], data: Any, *, prefix: str = "") -> M:
    """`model` from `data`, or `document.invalid` listing every error with its JSON path."""
    try:
        return model.model_validate(data)
    except ValidationError as error:
        errors = [
            {
                "path": prefix + json_path(item["loc"], data),
                "message": item["msg"].removeprefix("Value error, "),
                "type": item["type"],
            }
            for item in error.errors(include_url=False)
        ]
        paths = ", ".join(sorted({e["path"] or "/" for e in errors}))
        raise DocumentInvalid(f"The document is invalid at {paths}.", errors=errors) from None


def invalid(path: str, message: str) -> DocumentInvalid:
    return DocumentInvalid(
        f"The document is invalid at {path}: {message}",
        errors=[{"path": path, "message": message, "type": "value_error"}],
    )


def apply_patch(
    document: dict[str, Any], operations: list[dict[str, Any]], *, id_collection: str | None = None
) -> dict[str, Any]:
    """Apply RFC 6902 operations to a copy of `document`; the original is never touched.

    With `id_collection` (objects, fields, nodes), the ids of that list's items are kept: a patch
    may remove a whole item (`remove /objects/3` deletes it) but never change or drop an id any
    other way — replacing an id, or replacing an item or the whole list with other ids.
    """
    # Loaded here, not at the ai, flows, labels and 1 more functions' cold start.
    import jsonpatch
    import jsonpointer

    if not isinstance(operations, list) or not all(isinstance(op, dict) for op in operations):
        raise PatchFailed("`operations` must be a list of RFC 6902 operation objects.")
    if len(operations) > MAX_PATCH_OPERATIONS:
        raise PatchFailed(
            f"The patch has {len(operations)} operations; at most {MAX_PATCH_OPERATIONS}.",
            reason="too_many_operations",
            limit=MAX_PATCH_OPERATIONS,
        )
    # One copy, changed in place by each operation: a copy per operation would cost the
    # document's size times the number of operations.
    current: Any = copy.deepcopy(document)
    size = _size(current)
    removed: set[Any] = set()
    for index, operation in enumerate(operations):
        if id_collection is not None:
            removed |= _removed_ids(current, operation, id_collection, index)
        size += _growth(current, operation)
        if size > MAX_PATCHED_DOCUMENT_CHARS:
            raise PayloadTooLarge(
                f"operations[{index}] would make the document larger than "
                f"{MAX_PATCHED_DOCUMENT_CHARS} characters of JSON; nothing was saved.",
                ProblemCode.DOCUMENT_TOO_LARGE,
                index=index,
                limit=MAX_PATCHED_DOCUMENT_CHARS,
            )
        try:
            # The operation's own value is copied: applied in place, it would become part of
            # the document and later operations would change the caller's operations.
            current = jsonpatch.JsonPatch([copy.deepcopy(operation)]).apply(current, in_place=True)
        except jsonpatch.JsonPatchTestFailed as error:
            raise PatchFailed(
                f"operations[{index}]: the `test` failed: {error}",
                index=index,
                reason="test_failed",
            ) from None
        except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as error:
            raise PatchFailed(
                f"operations[{index}] does not apply: {error}", index=index, reason=str(error)
            ) from None
        except (TypeError, KeyError, IndexError, ValueError, AttributeError) as error:
            raise PatchFailed(
                f"operations[{index}] is malformed: {error}", index=index, reason=str(error)
            ) from None
    if not isinstance(current, dict):
        raise PatchFailed("The patch must leave an object at the document root.")
    if id_collection is not None:
        kept = set(ids_of(current, id_collection))
        dropped = [i for i in ids_of(document, id_collection) if i not in kept and i not in removed]
        if dropped:
            raise IdChanged(
                f"The patch drops or changes the ids {dropped}; ids are kept (delete an item "
                f"with `remove /{id_collection}/<index>`).",
                ids=dropped,
            )
    return current


def _size(value: Any) -> int:
    """Characters of `value` as compact JSON (what the limit counts)."""
    try:
        return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False))
    except (TypeError, ValueError):
        return 0  # not JSON: jsonpatch refuses the operation itself


def _at(document: Any, pointer: Any) -> tuple[bool, Any]:
    """(found, value) at a JSON pointer; not found for anything malformed."""
    # Loaded here, not at the ai, flows, labels and 1 more functions' cold start.
    import jsonpointer

    if not isinstance(pointer, str):
        return False, None
    try:
        return True, jsonpointer.resolve_pointer(document, pointer)
    except (jsonpointer.JsonPointerException, TypeError, KeyError, IndexError, ValueError):
        return False, None


def _growth(document: Any, operation: dict[str, Any]) -> int:
    """How many characters `operation` adds to the document (negative: removes), measured
    before it runs: only the values it brings in or takes out are measured, never the whole
    document. An operation that will not apply counts 0 (it fails when applied)."""
    op, path = operation.get("op"), operation.get("path")
    if op == "remove":
        found, old = _at(document, path)
        return -_size(old) if found else 0
    if op in ("add", "replace", "copy"):
        if op == "copy":
            found, new = _at(document, operation.get("from"))
            if not found:
                return 0
        elif "value" in operation:
            new = operation["value"]
        else:
            return 0
        # A key and its punctuation ("key":…,) count as well, so the sum never falls short.
        grows = _size(new) + len(str(path)) + 4
        parent = str(path).rpartition("/")[0]
        found_parent, container = _at(document, parent)
        replaces = op == "replace" or (found_parent and isinstance(container, dict))
        if replaces:
            found, old = _at(document, path)
            if found:
                grows -= _size(old)
        return grows
    return 0  # move and test change nothing in size


def ids_of(document: Any, collection: str) -> list[Any]:
    items = document.get(collection) if isinstance(document, dict) else None
    if not isinstance(items, list):
        return []
    return [item.get("id") for item in items if isinstance(item, dict)]


def _removed_ids(current: Any, operation: dict[str, Any], collection: str, index: int) -> set[Any]:
    """Ids this operation deletes outright; refuses operations aimed at an id itself."""
    op = operation.get("op")
    for key in ("path", "from"):
        parts = str(operation.get(key, "")).split("/")
        if (
            len(parts) == 4
            and parts[1] == collection
            and parts[3] == "id"
            and not (key == "from" and op == "copy")
        ):
            raise IdChanged(
                f"operations[{index}] (`{op} {operation.get(key)}`) would change an "
                "id; ids are kept.",
                index=index,
                path=operation.get(key),
            )
    parts = str(operation.get("path", "")).split("/")
    if op == "remove" and len(parts) == 3 and parts[1] == collection and parts[2].isdigit():
        items = current.get(collection) if isinstance(current, dict) else None
        position = int(parts[2])
        if isinstance(items, list) and position < len(items) and isinstance(items[position], dict):
            return {items[position].get("id")}
    return set()
