"""Counter blocks: a Runner reserves a block of a counter's values so that its site can print
labels with values nobody else takes, also while the service is away (docs/concepts/
offline-sites.md). A reservation moves the counter past the block and records the block in one
DynamoDB transaction, with its audit entry on the counter: no cloud print and no other Runner
can take a value in it. The Runner names the block (its journal holds the id before it asks),
so a retry after a lost answer returns the block it got, never a second one."""

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain.actors import Caller, Invocation
from etikett.domain.audit import audit
from etikett.domain.counters.counter_values import load, period_of
from etikett.store import counters
from etikett.store.conditions import ConditionName
from etikett.store.counters import BlockRecord
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import ConditionFailed, UnitOfWork
from etikett_engine.errors import Conflict, Forbidden, ProblemCode
from etikett_engine.model import Model

MAX_BLOCK = 10_000  # values in one block: a day of a fast line; more blocks come at low water
ATTEMPTS = 8  # concurrent takes move the counter under a reservation: read again, this often


class BlockRequest(Model):
    model_config = ConfigDict(extra="forbid")
    block_id: str = Field(pattern=r"^blk_[A-Za-z0-9]{8,64}$", description="The Runner's id.")
    counter: str = Field(min_length=1, max_length=64)
    size: int = Field(ge=1, le=MAX_BLOCK)


class Block(Model):
    block_id: str
    counter: str
    first: int = Field(description="The block's first value; then `first + step`, … ")
    size: int
    step: int
    period: str = Field(description="The reset period its values belong to ('' for never).")
    reset: str
    format: str | None
    reserved_at: str


def _view(block: BlockRecord) -> Block:
    record = load(block.counter)
    return Block(
        block_id=block.block_id,
        counter=block.counter,
        first=block.first,
        size=block.size,
        step=block.step,
        period=block.period,
        reset=record.reset,
        format=record.format,
        reserved_at=clock.rfc3339(block.reserved_at),
    )


def reserve(runner: RunnerRecord, request: BlockRequest, counters_in_use: set[str]) -> Block:
    """The block `request.block_id` names: reserved now, or the one reserved before under that
    id (by this Runner). Only counters the Runner's deployed flows read (`counters_in_use`)."""
    invocation = Invocation(
        Caller(actor="service", subject=f"runner:{runner.name}", roles=frozenset({"operator"})),
        "postRunnerCounterBlock",
    )
    earlier = counters.get_block(request.block_id)
    if earlier is not None:
        return _mine(runner, earlier)
    if request.counter not in counters_in_use:
        raise Forbidden(
            f"No flow deployed to this Runner's group prints a label that reads "
            f"counters.{request.counter}.",
            ProblemCode.RUNNER_COUNTER_NOT_IN_FLOW,
            counter=request.counter,
        ).audited_as(request.counter)
    for _ in range(ATTEMPTS):
        record = load(request.counter)
        if not record.active:
            raise Conflict(
                f"The counter {request.counter!r} is deactivated.",
                ProblemCode.COUNTER_INACTIVE,
                name=request.counter,
            )
        period = period_of(record.reset, clock.now())
        first = record.current + record.step if record.period == period else record.start
        block = BlockRecord(
            block_id=request.block_id,
            counter=record.name,
            runner_id=runner.id,
            first=first,
            size=request.size,
            step=record.step,
            period=period,
            reserved_at=clock.now(),
        )
        last = first + record.step * (request.size - 1)
        details = {"block_id": block.block_id, "runner_id": runner.id, "first": first}
        entry = audit.record(
            invocation, record.name, details={**details, "last": last, "size": request.size}
        )
        try:
            with UnitOfWork(entry) as uow:
                counters.reserve(uow, record, block)
        except ConditionFailed as failed:
            if (
                failed.name == ConditionName.BLOCK_ABSENT
            ):  # a retry that raced its own first attempt
                again = counters.get_block(request.block_id)
                if again is not None:
                    return _mine(runner, again)
            continue  # the counter moved (a print, another Runner): read it again
        return _view(block)
    raise Conflict(
        f"The counter {request.counter!r} kept changing; try again.",
        ProblemCode.RESOURCE_CONFLICT,
        name=request.counter,
    )


def _mine(runner: RunnerRecord, block: BlockRecord) -> Block:
    if block.runner_id != runner.id:
        raise Conflict(
            "This block id is another Runner's.", ProblemCode.RESOURCE_CONFLICT, name=block.counter
        )
    return _view(block)
