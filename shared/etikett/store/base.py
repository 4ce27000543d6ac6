"""What every table shares: where it is, one connection per process, and turning stored items
into the plain records the rest of the service reads.

Only `store/` knows pynamodb. Each repository module declares its table's items (pynamodb models,
private to it) and the records it hands out (NamedTuples with plain Python types), and
converts between the two with `record_of` and `item_of`.

Records are `typing.NamedTuple`s, not frozen dataclasses: just as immutable and typed, and about
seven times cheaper to define in Python 3.11 (a frozen dataclass compiles six generated methods
when its class is created), which every function pays at its cold start for each record it
loads.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Iterator, Mapping
from typing import Any, Protocol, TypeVar, Union, cast, get_args, get_origin, get_type_hints

from pynamodb.attributes import MapAttribute
from pynamodb.connection import Connection, TableConnection
from pynamodb.exceptions import DoesNotExist, PutError
from pynamodb.models import MetaProtocol, Model, _ModelFuture
from pynamodb.transactions import TransactGet

from etikett.settings import get_settings
from etikett.store import attribute_wire, clients
from etikett_engine.errors import PayloadTooLarge, ProblemCode

M = TypeVar("M", bound=Model)
R = TypeVar("R")

_TIMEOUTS: dict[str, Any] = {
    "connect_timeout_seconds": 2,
    "read_timeout_seconds": 10,
    "max_retry_attempts": 3,
}


def table_meta(setting: str) -> MetaProtocol:
    """A pynamodb `Meta` for the table whose name the settings hold as `setting`."""
    settings = get_settings()

    class Meta:
        table_name = getattr(settings, setting)
        table_setting = setting
        region = settings.region
        host = settings.dynamodb_endpoint
        connect_timeout_seconds = _TIMEOUTS["connect_timeout_seconds"]
        read_timeout_seconds = _TIMEOUTS["read_timeout_seconds"]
        max_retry_attempts = _TIMEOUTS["max_retry_attempts"]

    return cast(MetaProtocol, Meta)


def connection() -> Connection:
    """The process's connection for transactions (the models keep their own)."""
    settings = get_settings()
    return _connection(settings.region, settings.dynamodb_endpoint)


class _WireConnection(Connection):
    """pynamodb's connection with two changes: its client comes from the process's one botocore
    session (`clients.session`), and writes attribute values directly (attribute_wire): the
    transactions' items, the bulk of what the service writes."""

    @property
    def session(self) -> Any:
        # pynamodb's own makes a botocore session per connection, whose first client loads
        # botocore's data files again.
        return clients.session()

    @property
    def client(self) -> Any:
        # pynamodb makes the client on first use (and again if its credentials went missing).
        with clients.MAKING:
            return attribute_wire.install(super().client)


@functools.cache
def _connection(region: str, host: str | None) -> Connection:
    # One per process for the transactions; each table's item classes have their own (`Item`).
    return _WireConnection(region=region, host=host, **_TIMEOUTS)


class Item(Model):
    """A table's item. pynamodb gives each item class a connection of its own, with a botocore
    session of its own; ours is a `_WireConnection`, so that every table's client comes from the
    process's one session. (pynamodb has no setting for the connection an item class uses: this
    replaces the one its `_get_connection` made; pynamodb is pinned, and test_clients.py holds
    every table to it.)"""

    @classmethod
    def _get_connection(cls) -> TableConnection:
        table = super()._get_connection()
        if type(table.connection) is not _WireConnection:  # pynamodb's, just made
            made = table.connection
            table.connection = _WireConnection(
                region=cls.Meta.region, host=cls.Meta.host, **_TIMEOUTS
            )
            table.connection.add_meta_table(made.get_meta_table(table.table_name))
        return table


def reads() -> TransactGet:
    """Several items, from any tables, in one round trip (one consistent read)."""
    return TransactGet(connection=connection())


class ReadAlong(Protocol):
    """Items asked for in another read's round trip (a request's own reads, with its caller's
    session): one consistent read of both, one call instead of two."""

    def ask(self, batch: TransactGet) -> None: ...


def found(future: _ModelFuture[M]) -> M | None:
    """A `reads()` result: the item, or None where there was none."""
    try:
        return future.get()
    except DoesNotExist:
        return None


def condition_failed(error: Exception) -> bool:
    """Whether a write was refused for its condition (and for nothing else: throttling, a
    refused value)."""
    return getattr(error, "cause_response_code", None) == "ConditionalCheckFailedException"


def save_once(item: Model) -> bool:
    """Save `item` unless an item with its key exists: False when one did (another instance
    stored it first: use that one). Any other failure (throttling, a refused value) is raised
    as it is, never taken for the other instance's item."""
    try:
        item.save(condition=type(item)._hash_key_attribute().does_not_exist())
    except PutError as error:
        if condition_failed(error):
            return False
        raise
    return True


def get_item(model: type[M], hash_key: str, range_key: str | None = None) -> M | None:
    """One item by its key, or None."""
    if hash_key == "" or range_key == "":
        return None  # DynamoDB refuses an empty key string: no item can have one
    try:
        return model.get(hash_key, range_key) if range_key is not None else model.get(hash_key)
    except model.DoesNotExist:
        return None


# What DynamoDB (and SQS) answer when they throttle a request.
THROTTLING_CODES = frozenset(
    {
        "ProvisionedThroughputExceededException",
        "ThrottlingException",
        "RequestLimitExceeded",
        "Throttling",
    }
)


def throttled(error: BaseException) -> bool:
    """Whether `error` (or what caused it) is AWS throttling that outlasted the SDK's retries."""
    seen: BaseException | None = error
    for _ in range(10):
        if seen is None:
            return False
        code = getattr(seen, "cause_response_code", None)  # pynamodb's errors
        response = getattr(seen, "response", None)  # botocore's ClientError
        if isinstance(response, dict):
            code = code or (response.get("Error") or {}).get("Code")
        reasons = getattr(seen, "cancellation_reasons", None) or []
        codes = {code, *(getattr(reason, "code", None) for reason in reasons if reason)}
        if codes & THROTTLING_CODES or any(c and "Throttl" in c for c in codes if c):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


# What AWS answers when it cannot serve a request for now (after the SDK's retries).
UNAVAILABLE_CODES = frozenset({"ServiceUnavailable", "InternalServerError", "InternalFailure"})


def unavailable(error: BaseException) -> bool:
    """Whether `error` (or what caused it) is AWS not answering in time or answering 5xx
    beyond the SDK's retries: an overloaded or unreachable service, not a bug."""
    # Loaded on a failure only: botocore's exceptions are not loaded at every cold start.
    from botocore.exceptions import ConnectionError, HTTPClientError

    seen: BaseException | None = error
    for _ in range(10):
        if seen is None:
            return False
        if isinstance(seen, (ConnectionError, HTTPClientError)):
            return True
        response = getattr(seen, "response", None)  # botocore's ClientError
        if isinstance(response, dict):
            code = (response.get("Error") or {}).get("Code")
            status = (response.get("ResponseMetadata") or {}).get("HTTPStatusCode") or 0
            if code in UNAVAILABLE_CODES or int(status) >= 500:
                return True
        seen = seen.__cause__ or seen.__context__
    return False


def table_items() -> Iterator[type[Model]]:
    """Every item class of every table (for re-aiming them: see `bind`)."""
    # Only bind() (tests, local mode) imports every table module; a function loads its own.
    import importlib
    import pkgutil

    import etikett.store

    for module in pkgutil.iter_modules(etikett.store.__path__):
        importlib.import_module(f"etikett.store.{module.name}")
    pending = list(Model.__subclasses__())
    while pending:
        model = pending.pop()
        pending.extend(model.__subclasses__())
        if model.__module__.startswith("etikett.store.") and model is not Item:
            yield model


def bind() -> None:
    """Aim every table at what the settings say now (tests and local mode change them after
    the tables were first imported)."""
    settings = get_settings()
    for model in table_items():
        setting = getattr(model.Meta, "table_setting", None)
        if setting is not None:
            model.Meta.table_name = getattr(settings, setting)
        model.Meta.host = settings.dynamodb_endpoint
        model.Meta.region = settings.region
        model._connection = None
    _connection.cache_clear()
    clients.forget()


def item_too_large(error: Exception) -> bool:
    """Whether DynamoDB refused a write because an item would exceed its 400 KB."""
    code = getattr(error, "cause_response_code", None)
    message = str(getattr(error, "cause_response_message", "") or "")
    return code == "ValidationException" and "size" in message and "exceeded" in message


def too_large() -> Exception:
    """The problem of a write refused for its item's size (413 `resource.too_large`)."""
    return PayloadTooLarge(
        "The change would make a stored item larger than 400 KB; nothing was written.",
        ProblemCode.RESOURCE_TOO_LARGE,
        limit=400_000,
    )


# --- items and records ----------------------------------------------------------------------------


def record_of(kind: type[R], item: Model) -> R:
    """The record `kind` (a NamedTuple) from a stored item: each field from the item's attribute
    of the same name, as the field's type says (DynamoDB numbers come back as floats)."""
    values = {}
    for name, convert in _converters_of(kind):
        values[name] = convert(getattr(item, name))
    return kind(**values)


def record_from(kind: type[R], values: Mapping[str, Any]) -> R:
    """As `record_of`, from an item's values by name (`wire_items.values`)."""
    return kind(**{name: convert(values.get(name)) for name, convert in _converters_of(kind)})


def item_of(model: type[M], record: Any, **extra: Any) -> M:
    """The stored item of `record`, with `extra` attributes (keys, index attributes) beside."""
    return model(**values_of(record, **extra))


def values_of(record: Any, **extra: Any) -> dict[str, Any]:
    """What `item_of` makes the item of `record` from (`wire_items.put` writes it without one)."""
    values = {name: _stored(value) for name, value in zip(record._fields, record, strict=True)}
    return {**values, **extra}


_CONVERTERS: dict[type[Any], list[tuple[str, Any]]] = {}


def _converters_of(kind: type[Any]) -> list[tuple[str, Any]]:
    """Each field's name and how to turn a stored value into it (worked out once per type)."""
    converters = _CONVERTERS.get(kind)
    if converters is None:
        hints = get_type_hints(kind)
        converters = [(name, _converter(hints[name])) for name in kind._fields]
        _CONVERTERS[kind] = converters
    return converters


def _converter(hint: Any) -> Any:
    optional = False
    origin = get_origin(hint)
    if origin in (Union, types.UnionType):
        members = [arg for arg in get_args(hint) if arg is not type(None)]
        optional = len(members) < len(get_args(hint))
        hint = members[0] if len(members) == 1 else Any
        origin = get_origin(hint)
    if hint is int:
        convert: Any = int
    elif hint is float:
        convert = float
    elif hint is bool:
        convert = bool
    elif origin is dict or hint is dict:
        convert = _plain
    elif origin is tuple or hint is tuple:
        convert = _plain_tuple
    elif origin is list or hint is list:
        convert = _plain_list
    else:
        convert = _identity
    if optional:
        return lambda value: None if value is None else convert(value)
    return convert


def _identity(value: Any) -> Any:
    return value


def _plain(value: Any) -> Any:
    """Maps as plain dicts (pynamodb hands out MapAttribute instances)."""
    if isinstance(value, MapAttribute):
        return {key: _plain(inner) for key, inner in value.as_dict().items()}
    if isinstance(value, dict):
        return {key: _plain(inner) for key, inner in value.items()}
    if isinstance(value, list):
        return [_plain(inner) for inner in value]
    return value


def _plain_list(value: Any) -> Any:
    return [_plain(inner) for inner in value or []]


def _plain_tuple(value: Any) -> Any:
    return tuple(_plain(inner) for inner in value or [])


def changes(model: type[Model], before: Any, after: Any) -> list[Any]:
    """Update actions turning the stored `before` record into `after` (same record type): a set
    for each changed field, a remove for one that became None."""
    actions = []
    for name, old, new in zip(after._fields, before, after, strict=True):
        if old == new:
            continue
        attribute = getattr(model, name)
        actions.append(attribute.remove() if new is None else attribute.set(_stored(new)))
    return actions


def _stored(value: Any) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value
