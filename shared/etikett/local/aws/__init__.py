"""Local AWS: an in-process moto server whose state survives a restart of the process.

moto keeps everything in memory, so `LocalAws` (server.py) pickles all of moto's per-region
backends into one state file (snapshots.py, with the pickling of moto's models in pickling.py)
and assigns them back into moto's live backend dicts on `start()`. Requests go through
gateway.py, which serializes them under a reader/writer lock (locking.py) and answers SQS long
polls outside it.

The state file is a pickle: it is as trusted as the code that reads it, so keep it private
(it is written with mode 0600). One `LocalAws` per process: moto's state is process-wide.
"""

from etikett.local.aws.pickling import (
    EmptyLike,
    account_backends,
    backend_dict_by_key,
    load_certificate,
    load_private_key,
    load_public_key,
    set_dict_state,
)
from etikett.local.aws.server import LocalAws

__all__ = ["LocalAws"]

# State files written before this package was split name the helpers their pickles call by
# these names, in this module; they keep loading.
_EmptyLike = EmptyLike
_account_backends = account_backends
_backend_dict_by_key = backend_dict_by_key
_load_certificate = load_certificate
_load_private_key = load_private_key
_load_public_key = load_public_key
_set_dict_state = set_dict_state
