"""Cold-start help for function entries: import this first, call `done()` once the handler is
built.

Loading the modules allocates many objects that live as long as the process; pausing the garbage
collector meanwhile (and freezing what was loaded) saves 15–20 % of the import.
"""

import gc

gc.disable()


def done() -> None:
    gc.freeze()
    gc.enable()
