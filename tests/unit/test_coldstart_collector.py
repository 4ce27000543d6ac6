"""A function's garbage collector after its cold start (coldstart.done): what was loaded is
frozen, young collections are rarer than Python's default, and garbage cycles made later are
still collected without anyone asking."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import gc, weakref
from etikett import coldstart
assert not gc.isenabled()  # paused while the entry loads
coldstart.done()
print(gc.isenabled(), gc.get_freeze_count() > 0, gc.get_threshold())
class Node:
    pass
cycle = Node()
cycle.self = cycle
alive = weakref.ref(cycle)
del cycle
# Objects that stay alive, as a request's do (one freed at once counts for nothing).
kept = [[] for _ in range(coldstart.YOUNG_COLLECTION_EVERY // 2)]
print(alive() is None, end=" ")  # Python's default would have collected it by now
kept += [[] for _ in range(coldstart.YOUNG_COLLECTION_EVERY)]
print(alive() is None)
"""


def test_after_the_cold_start_young_objects_are_collected_less_often_and_cycles_still() -> None:
    ran = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60, check=True
    )
    threshold_line, collected = ran.stdout.strip().splitlines()
    enabled, frozen, threshold = threshold_line.split(" ", 2)
    assert (enabled, frozen) == ("True", "True")
    assert threshold == "(20000, 10, 10)"
    assert collected == "False True"
