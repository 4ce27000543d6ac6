"""Cold-start help for function entries: import this first, load the entry's third-party
packages with `libraries`, and call `done()` once the handler is built.

Loading the modules allocates many objects that live as long as the process; pausing the garbage
collector meanwhile (and freezing what was loaded) saves 15–20 % of the import. After it, young
objects are collected less often than Python's default.
"""

import gc

gc.disable()

# What every API function's entry uses of the third-party packages (`libraries` loads them first).
API_LIBRARIES = (
    "fastapi",
    "pydantic",
    "pydantic_settings",
    "mangum",
    "aws_lambda_powertools",
    "aws_lambda_powertools.logging",
    "aws_lambda_powertools.metrics",
)
# What a function that reads or writes the tables uses.
TABLE_LIBRARIES = (
    "pynamodb.models",
    "pynamodb.attributes",
    "pynamodb.indexes",
    "pynamodb.transactions",
)
# The stream and queue consumers' (Powertools' batch processing).
BATCH_LIBRARIES = (
    "aws_lambda_powertools",
    "aws_lambda_powertools.utilities.batch",
    "pydantic_settings",
)
# The MCP endpoint's server (the MCP SDK).
MCP_LIBRARIES = (
    "mcp_types",
    "mcp.server.lowlevel",
    "mcp.server.streamable_http_manager",
)


def libraries(*packages: str) -> None:
    """Imports these third-party packages now, near the bottom of the call stack, before any
    module of ours imports them from deep inside its own nested imports. Only packages the entry
    loads anyway (a test holds every entry to that): this changes when they load, not what.

    Python 3.11 keeps its frames on a stack of 16 KiB chunks and frees a chunk as soon as the
    frame at its base returns, so a loop whose calls land on a chunk boundary maps and unmaps a
    chunk, with its page faults, on every call (CPython gh-142183; fixed in 3.13 and later, not
    in 3.11). The libraries' import-time work (regular expressions, pydantic's schemas of
    FastAPI's models, botocore) run nested inside our imports hit that 1,300-3,400 times per cold
    start of an API function, whatever depth the runtime calls the entry from; loaded from here,
    310-1,290 times (and a queue consumer's 5-230 instead of 340-5,800): strace at four caller
    depths, bench/README.md."""
    for package in packages:
        __import__(package)


# Allocations between two young collections (Python's default: 700). A request that builds many
# objects (an upload of a hundred offline prints: its models, records and requests) keeps tens
# of thousands of them alive while it runs, and every young collection walks them all again:
# a fifth of the service's processor time in a sync of offline prints (bench/README.md).
# Cycles are still collected, a little later.
YOUNG_COLLECTION_EVERY = 20_000


def done() -> None:
    gc.freeze()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, *gc.get_threshold()[1:])
    gc.enable()
