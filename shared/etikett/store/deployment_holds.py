"""What the Runners of a deployment's stage keep running while a change of the deployment's
context or printer aliases waits for approval (`deploymentChangesNeedApproval`), in the
deployments table beside the deployment: one item (dep_…, "held#<stage index>") per held stage.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NamedTuple

from pynamodb.attributes import (
    JSONAttribute,
    NumberAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)

from etikett.store.base import Item, get_item, item_of, record_of
from etikett.store.deployments import META

if TYPE_CHECKING:
    from etikett.store.unit_of_work import UnitOfWork


class HeldConfigRecord(NamedTuple):
    deployment_id: str
    stage: int
    context: dict[str, Any]  # name -> value
    printers: dict[str, Any]  # alias -> {printer_id, by_runner}
    held_at: dt.datetime


class _HeldConfigItem(Item):
    Meta = META
    deployment_id = UnicodeAttribute(hash_key=True, attr_name="pk")
    sk = UnicodeAttribute(range_key=True)  # held#<stage index>
    stage = NumberAttribute()
    context = JSONAttribute(default=dict)
    printers = JSONAttribute(default=dict)
    held_at = UTCDateTimeAttribute()


def _sk(stage: int) -> str:
    return f"held#{stage}"


def get(deployment_id: str, stage: int) -> HeldConfigRecord | None:
    item = get_item(_HeldConfigItem, deployment_id, _sk(stage))
    return record_of(HeldConfigRecord, item) if item is not None else None


def hold(uow: UnitOfWork, held: HeldConfigRecord) -> None:
    uow.put(item_of(_HeldConfigItem, held, sk=_sk(held.stage)))


def release(uow: UnitOfWork, deployment_id: str, stage: int) -> None:
    uow.delete(_HeldConfigItem(deployment_id, _sk(stage)))
