"""Pickling what moto keeps in its backends, for the state file of local AWS (snapshots.py).

moto's models hold things pickle cannot write as they are (locks, cryptography keys, lambdas as
default factories, weak references, references to moto's live registries) or that pickle would
write wrongly (dict subclasses whose items() and __setitem__ moto overrides). A reducer per kind
writes them as what rebuilds them.
"""

from __future__ import annotations

import collections
import copy
import copyreg
import io
import pickle
import sys
import threading
import typing
import weakref
from collections.abc import Callable
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes, PublicKeyTypes
from moto.core.base_backend import AccountSpecificBackend, BackendDict, BaseBackend

__all__ = [
    "Snapshot",
    "backend_dict_by_key",
    "backend_dict_key",
    "known_type_count",
    "live_backend_dicts",
    "pickle_state",
]

# Backends by BackendDict key ("module:attribute"), account and region.
Snapshot = dict[str, dict[str, dict[str, BaseBackend]]]


def pickle_state(state: Snapshot) -> bytes:
    buffer = io.BytesIO()
    _SnapshotPickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(state)
    return buffer.getvalue()


def known_type_count() -> int:
    """How many classes the pickler has met in this process (it grows as new kinds turn up)."""
    return len(_reducers_by_type)


def live_backend_dicts() -> list[BackendDict[Any]]:
    """moto's registry of every service's backends (a copy of the list, not of the dicts)."""
    # moto declares its class-wide registry as an instance variable of a generic class, which
    # mypy will not read through the class; the class's namespace holds it all the same.
    instances: list[BackendDict[Any]] = vars(BackendDict)["_instances"]
    return list(instances)


# BackendDicts are module globals; a key names one as "module:attribute".
_keys_by_backend_dict: dict[int, str] = {}


def backend_dict_key(backend_dict: BackendDict[Any]) -> str:
    key = _keys_by_backend_dict.get(id(backend_dict))
    if key is not None:
        return key
    home = backend_dict.backend.__module__
    candidates = [home, *sorted(name for name in sys.modules if name.startswith("moto."))]
    for module_name in candidates:
        module = sys.modules.get(module_name)
        for attribute, value in sorted(vars(module).items()) if module else ():
            if value is backend_dict:
                key = f"{module_name}:{attribute}"
                _keys_by_backend_dict[id(backend_dict)] = key
                return key
    raise LookupError(f"cannot name the moto backends of {backend_dict.service_name!r}")


def backend_dict_by_key(key: str) -> BackendDict[Any]:
    """The live BackendDict, imported if this process has not used the service yet."""
    module_name, _, attribute = key.partition(":")
    if not module_name.startswith("moto."):
        raise ValueError(f"not a moto backend: {key!r}")
    module = __import__(module_name, fromlist=[attribute])
    backend_dict = getattr(module, attribute)
    if not isinstance(backend_dict, BackendDict):
        raise TypeError(f"{key!r} is not a moto BackendDict")
    return backend_dict


def account_backends(key: str, account_id: str) -> AccountSpecificBackend[Any]:
    return backend_dict_by_key(key)[account_id]


def load_private_key(der: bytes) -> PrivateKeyTypes:
    return serialization.load_der_private_key(der, password=None)


def load_public_key(der: bytes) -> PublicKeyTypes:
    return serialization.load_der_public_key(der)


def load_certificate(der: bytes) -> x509.Certificate:
    return x509.load_der_x509_certificate(der)


class EmptyLike:
    """Picklable stand-in for a factory like ``lambda: defaultdict(dict)``: copies of the
    (empty) value the original factory made."""

    def __init__(self, sample: object) -> None:
        self.sample = sample

    def __call__(self) -> object:
        return copy.deepcopy(self.sample)


_EMPTY_CONTAINER_TYPES = (dict, list, set, collections.defaultdict, collections.OrderedDict)
_NO_FACTORY = "no default_factory"


def _picklable_factory(factory: Callable[[], Any] | None) -> Callable[[], Any] | None:
    if factory is None or "<" not in getattr(factory, "__qualname__", ""):
        return factory
    # moto builds some defaultdicts with lambdas (SSM tags, Lambda aliases), which pickle
    # cannot name. Only a factory of fresh empty containers can be replaced safely.
    sample = factory()
    if type(sample) not in _EMPTY_CONTAINER_TYPES or sample:
        raise pickle.PicklingError(f"cannot pickle default_factory {factory!r}")
    return EmptyLike(sample)


def _reduce_defaultdict(value: collections.defaultdict[Any, Any]) -> Any:
    factory = _picklable_factory(value.default_factory)
    if factory is value.default_factory:
        return NotImplemented  # pickles as usual
    return collections.defaultdict, (factory,), None, None, iter(dict.items(value))


def _reduce_dict_subclass(value: dict[Any, Any]) -> Any:
    """Pickle a dict subclass by its real contents, and load it without calling its methods.

    The default goes through the subclass's items() and __setitem__ (and a defaultdict's
    through __init__), which moto overrides: S3's _VersionedKeyStore yields only the latest
    version of each key, DynamoDB's LimitedSizeDict re-validates its size on every insert,
    SSM's ParameterDict takes other __init__ arguments.
    """
    factory: Any = _NO_FACTORY
    if isinstance(value, collections.defaultdict):
        factory = _picklable_factory(value.default_factory)
    state = (getattr(value, "__dict__", None) or None, dict(dict.items(value)), factory)
    return _newobj, (type(value),), state, None, None, set_dict_state


# pickle's protocol-2 constructor: pickle writes a NEWOBJ for it, which calls cls.__new__(cls)
# without __init__. typeshed does not declare it.
_newobj: Callable[..., Any] = vars(copyreg)["__newobj__"]


def set_dict_state(value: dict[Any, Any], state: tuple[Any, dict[Any, Any], Any]) -> None:
    attributes, items, factory = state
    if attributes:
        value.__dict__.update(attributes)
    dict.update(value, items)
    if factory != _NO_FACTORY and isinstance(value, collections.defaultdict):
        value.default_factory = factory


def _has_own_pickling(cls: type) -> bool:
    """Whether a class between `cls` and its builtin base defines how it pickles."""
    own = {"__reduce__", "__reduce_ex__", "__getstate__", "__setstate__", "__slots__"}
    for klass in cls.__mro__:
        if klass.__module__ in ("builtins", "collections"):
            return False
        if own & vars(klass).keys():
            return True
    return False


_PRIVATE_KEY_CLASSES = typing.get_args(PrivateKeyTypes)
_PUBLIC_KEY_CLASSES = typing.get_args(PublicKeyTypes)
_LOCK_TYPE = type(threading.Lock())
_RLOCK_TYPE = type(threading.RLock())

_Reducer = Callable[[Any], tuple[Any, ...]]


def _reducer_for(cls: type) -> _Reducer | None:
    if cls is _LOCK_TYPE:
        # Nobody holds a lock during a snapshot (requests are excluded), so a fresh one is equal.
        return lambda _: (threading.Lock, ())
    if cls is _RLOCK_TYPE:
        return lambda _: (threading.RLock, ())
    if issubclass(cls, threading.Condition):
        # SQS queues wait on one; its waiters are gone with the process anyway.
        return lambda cond: (threading.Condition, (cond._lock,))
    if issubclass(cls, _PRIVATE_KEY_CLASSES):
        # KMS keys hold cryptography keys, which do not pickle.
        return lambda key: (
            load_private_key,
            (
                key.private_bytes(
                    serialization.Encoding.DER,
                    serialization.PrivateFormat.PKCS8,
                    serialization.NoEncryption(),
                ),
            ),
        )
    if issubclass(cls, _PUBLIC_KEY_CLASSES):
        return lambda key: (
            load_public_key,
            (
                key.public_bytes(
                    serialization.Encoding.DER,
                    serialization.PublicFormat.SubjectPublicKeyInfo,
                ),
            ),
        )
    if issubclass(cls, x509.Certificate):
        return lambda cert: (
            load_certificate,
            (cert.public_bytes(serialization.Encoding.DER),),
        )
    if issubclass(cls, BackendDict):
        # A reference to moto's live registry must come back as the live one, not a copy.
        return lambda backend_dict: (backend_dict_by_key, (backend_dict_key(backend_dict),))
    if issubclass(cls, AccountSpecificBackend):
        return _reduce_account_backends
    if cls is collections.defaultdict:
        return _reduce_defaultdict
    if issubclass(cls, (collections.OrderedDict, collections.Counter)):
        return None  # their own reduction keeps their internals consistent
    if issubclass(cls, dict) and cls is not dict and not _has_own_pickling(cls):
        return _reduce_dict_subclass
    if issubclass(cls, (weakref.WeakValueDictionary, weakref.WeakKeyDictionary)):
        # Lambda's ARN index; the entries stay alive through the objects' other owners.
        return lambda mapping: (type(mapping), (dict(mapping.items()),))
    if issubclass(cls, weakref.WeakSet):
        return lambda items: (type(items), (list(items),))
    return None


def _reduce_account_backends(backends: AccountSpecificBackend[Any]) -> tuple[Any, ...]:
    for backend_dict in live_backend_dicts():
        for account_id, candidate in dict.items(backend_dict):
            if candidate is backends:
                return account_backends, (backend_dict_key(backend_dict), account_id)
    raise pickle.PicklingError("moto account backends outside of any BackendDict")


_reducers_by_type: dict[type, _Reducer | None] = {}


class _SnapshotPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        cls = type(obj)
        try:
            reducer = _reducers_by_type[cls]
        except KeyError:
            reducer = _reducers_by_type[cls] = _reducer_for(cls)
        if reducer is None:
            return NotImplemented
        return reducer(obj)
