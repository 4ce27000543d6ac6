"""celpy's LALR parser loaded from tables made once, not built from its grammar in every process.

lark builds celpy's parser in 120-300 ms on a process's first compile (a Lambda cold start's
first preview or print, a Runner's first offline label, every local-mode process); from lark's
cache file it loads in about 8 ms. The file lies beside celpy's grammar, so it belongs to that
celpy and lark alone. It is made when an environment is set up (`write()`: `make`, the render
layer's build), or else by the first process that may write there. lark itself checks that the
file was made from the same grammar, options, lark and Python, and builds the parser as before
when it was not (or when the file is missing or unreadable), writing the file again if it can.
"""

from __future__ import annotations

import functools
from pathlib import Path

TABLES_NAME = "etikett-parser.lark-cache"


def tables_path() -> Path:
    import celpy

    return Path(celpy.__file__).parent / TABLES_NAME


def install(tree_class: type) -> None:
    """Make celpy's shared parser from the tables before its first Environment does (called once,
    under `programs.runtime()`'s lock). celpy's own constructor makes it, with its own options:
    only lark's `cache` is added, for that call."""
    from celpy import celparser

    if celparser.CELParser.CEL_PARSER is not None:
        return
    lark = vars(celparser)["Lark"]
    setattr(celparser, "Lark", functools.partial(lark, cache=str(tables_path())))  # noqa: B010
    try:
        celparser.CELParser(tree_class=tree_class)
    finally:
        setattr(celparser, "Lark", lark)  # noqa: B010


def write() -> Path:
    """Make the tables for the celpy and lark installed here (what `install` then loads)."""
    import celpy
    from celpy import celparser

    path = tables_path()
    path.unlink(missing_ok=True)
    celparser.CELParser.CEL_PARSER = None
    install(celpy.CompiledRunner.tree_node_class)
    if not path.is_file():
        raise OSError(f"lark wrote no parser tables at {path}")
    return path
