"""The state file of local AWS: every moto backend in one pickle, behind a header.

A file is `MAGIC`, a JSON header line (format, moto version, time written) and the pickle
(pickling.py). It is written atomically with mode 0600; one that does not load is moved aside.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import typing
from datetime import datetime
from pathlib import Path

import moto
from moto.core.base_backend import backend_lock

from etikett.local.aws.pickling import (
    Snapshot,
    backend_dict_by_key,
    backend_dict_key,
    known_type_count,
    live_backend_dicts,
    pickle_state,
)
from etikett.local.files import write_atomically

__all__ = ["dump_backends", "load_state_file", "replace_backends", "write_state_file"]

logger = logging.getLogger(__name__)

_MAGIC = b"ETIKETT-LOCAL-AWS-SNAPSHOT\n"
_FORMAT = 1
# moto's own bookkeeping (e.g. its reset API), not AWS state.
_SKIPPED_SERVICES = frozenset({"moto_api"})


def dump_backends() -> bytes:
    """Pickle every per-region backend in one dump, so references between them stay shared."""
    state: Snapshot = {}
    for backend_dict in live_backend_dicts():
        if backend_dict.service_name in _SKIPPED_SERVICES:
            continue
        accounts = {
            account_id: dict(dict.items(regions))
            for account_id, regions in dict.items(backend_dict)
            if len(regions)
        }
        if accounts:
            state[backend_dict_key(backend_dict)] = accounts
    known_types = known_type_count()
    try:
        payload = pickle_state(state)
        if known_type_count() > known_types:
            # New kinds of objects (always so in a process's first snapshot): make sure that
            # they load, too, or the next start would have to set the whole file aside.
            pickle.loads(payload)
        return payload
    except Exception:
        # One service whose models do not round-trip must not cost all the others their state.
        failures: dict[str, Exception] = {}
        for key, accounts in state.items():
            try:
                pickle.loads(pickle_state({key: accounts}))
            except Exception as exc:
                failures[key] = exc
        if not failures:
            raise
        for key, failure in failures.items():
            if key not in _unpicklable_warned:
                _unpicklable_warned.add(key)
                logger.warning(
                    "moto state of %s cannot be saved and will be lost on restart (%s: %s)",
                    key,
                    type(failure).__name__,
                    failure,
                )
        return pickle_state({key: value for key, value in state.items() if key not in failures})


_unpicklable_warned: set[str] = set()


def load_state_file(path: Path) -> Snapshot | None:
    """Read a snapshot; move an unreadable file aside rather than lose or overwrite it."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    try:
        return _decode(data)
    except Exception as exc:
        stamp = datetime.now().strftime("%Y%m%dT%H%M%S%f")
        aside = path.with_name(f"{path.name}.unreadable-{stamp}")
        os.replace(path, aside)
        logger.warning(
            "could not load local AWS state from %s (%s: %s); moved it to %s, starting empty",
            path,
            type(exc).__name__,
            exc,
            aside,
        )
        return None


def _decode(data: bytes) -> Snapshot:
    if not data.startswith(_MAGIC):
        raise ValueError("not a local AWS snapshot")
    header_line, _, payload = data[len(_MAGIC) :].partition(b"\n")
    header = json.loads(header_line)
    if header.get("format") != _FORMAT:
        raise ValueError(f"unknown snapshot format {header.get('format')!r}")
    # moto's model classes change between releases; a pickle from another version may load
    # and then fail on the first request that touches a missing attribute.
    if header.get("moto") != moto.__version__:
        raise ValueError(f"written by moto {header.get('moto')}, this is moto {moto.__version__}")
    state = pickle.loads(payload)
    if not isinstance(state, dict):
        raise ValueError("snapshot payload is not a dict")
    for key in state:
        backend_dict_by_key(key)  # fail now, not halfway through the restore
    return typing.cast(Snapshot, state)


def replace_backends(state: Snapshot) -> None:
    """Make moto's process-wide state exactly `state`."""
    with backend_lock:
        for backend_dict in live_backend_dicts():
            if backend_dict.service_name not in _SKIPPED_SERVICES:
                backend_dict.clear()
        for key, accounts in state.items():
            backend_dict = backend_dict_by_key(key)
            for account_id, regions in accounts.items():
                # Indexing creates the account's dict and registers the BackendDict with moto.
                account_backends = backend_dict[account_id]
                for region, backend in regions.items():
                    dict.__setitem__(account_backends, region, backend)
        _register_buckets()


def _register_buckets() -> None:
    """moto's S3 keeps a process-wide bucket name -> (partition, account) registry beside its
    backends. It must name the buckets of the backends now in place: a name left from earlier
    state points at a backend without the bucket, whose lookup then recurses forever."""
    # moto's models load in the process that runs moto.
    from moto.s3.models import s3_backends

    registry = s3_backends.bucket_accounts
    registry.clear()
    for account_id, partitions in dict.items(s3_backends):
        for partition, backend in dict.items(partitions):
            for name in backend.buckets:
                registry[name] = (partition, account_id)


def write_state_file(path: Path, payload: bytes) -> None:
    """Write `payload` (from dump_backends) as the state file, atomically."""
    header = json.dumps({"format": _FORMAT, "moto": moto.__version__, "created": _now_iso()})
    write_atomically(path, (_MAGIC, header.encode(), b"\n", payload))


def _now_iso() -> str:
    return datetime.now().astimezone().isoformat(timespec="seconds")
