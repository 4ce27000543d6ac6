"""A deployment's record: read it, and save a change to it with its audit entry."""

from __future__ import annotations

from etikett.store import deployments as store
from etikett.store.audit import AuditRecord
from etikett.store.conditions import ConditionName
from etikett.store.deployments import DeploymentRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, NotFound, ProblemCode


def load(deployment_id: str) -> DeploymentRecord:
    record = store.get(deployment_id)
    if record is None:
        raise NotFound(
            f"No deployment {deployment_id}.",
            ProblemCode.DEPLOYMENT_NOT_FOUND,
            deployment_id=deployment_id,
        )
    return record


def saving(record: DeploymentRecord, entry: AuditRecord | None = None) -> UnitOfWork:
    """The unit of work of a change to `record`: refused (409) when it changed meanwhile."""
    stale = Conflict(
        f"{record.id} changed meanwhile; read it again.",
        ProblemCode.RESOURCE_CONFLICT,
        deployment_id=record.id,
    )
    return UnitOfWork(entry, errors={ConditionName.DEPLOYMENT_UNCHANGED: stale})
