"""moto's list of a response class's actions made once per class, not once per request.

For every request moto lists the methods of the handling class (`inspect.getmembers` over a
class of a hundred-odd methods) to see whether the action is one of them: about 3 % of local
AWS's time in a print. The classes do not change while local AWS serves, so `install()` keeps
each class's list.
"""

from __future__ import annotations

import functools
import threading

from moto.core import responses
from moto.core.utils import method_names_from_class

__all__ = ["install"]

_installed = threading.Lock()


@functools.cache
def _method_names(clazz: object) -> list[str]:
    return method_names_from_class(clazz)


def install() -> None:
    """Patch moto's request dispatch (process-wide, idempotent)."""
    with _installed:
        # call_action looks the function up in its own module (it imported it by name).
        setattr(responses, "method_names_from_class", _method_names)  # noqa: B010
