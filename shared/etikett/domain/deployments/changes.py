"""Changes of a deployment's context or printer aliases after a stage was approved.

Each approval records a fingerprint of the configuration it approved (context values and
printer aliases); a stage whose fingerprint differs from the deployment's now is "changed since
approval", on the deployment's answer and in the console. While the policy
`deploymentChangesNeedApproval` is on, such a change does not reach the stage's Runners: the
configuration they ran when it was made is held for them (`store.deployment_holds`) until a
person (an approver) approves the stage again — `postDeploymentApproval` with that stage. Every
change says in its audit entry which approved stages it concerns and whether it waits.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.deployments.models import APPROVED
from etikett.domain.deployments.records import saving
from etikett.domain.runners import runner_notices
from etikett.domain.users import policies
from etikett.store import deployment_holds as holds
from etikett.store import deployments as store
from etikett.store.deployment_holds import HeldConfigRecord
from etikett.store.deployments import DeploymentRecord
from etikett.store.unit_of_work import UnitOfWork

DIGEST = "approved_digest"  # a stage's fingerprint of what its approval approved
HELD = "held"  # a stage whose Runners keep what they ran until the change is approved


def fingerprint(context: dict[str, Any], printers: dict[str, Any]) -> str:
    """What identifies a configuration: context values and printer aliases, nothing else (not
    who set them or when)."""
    text = json.dumps(
        {"context": context, "printers": printers}, sort_keys=True, separators=(",", ":")
    )
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def current(record: DeploymentRecord) -> str:
    values = {name: entry["value"] for name, entry in record.context.items()}
    return fingerprint(values, record.printers)


def changed_since_approval(record: DeploymentRecord, stage: dict[str, Any]) -> bool:
    """Approved, and the deployment's configuration is not the one approved (stages approved
    before fingerprints were kept count as unchanged)."""
    approved = stage.get(DIGEST)
    return stage["status"] in APPROVED and approved is not None and approved != current(record)


def after_change(
    before: DeploymentRecord, after: DeploymentRecord
) -> tuple[DeploymentRecord, list[HeldConfigRecord], dict[str, Any]]:
    """`after` with the stages a change holds marked; the configurations to hold for them (what
    their Runners ran before the change); and what the audit entry says of it."""
    affected = [
        s["index"]
        for s in before.stages
        if s["status"] in APPROVED and s.get(DIGEST) is not None and s[DIGEST] != current(after)
    ]
    if not affected:
        return after, [], {}
    held: list[HeldConfigRecord] = []
    notes: dict[str, Any] = {"after_approval": True, "stages": affected}
    if policies.enabled(policies.DEPLOYMENT_CHANGES):
        stages = copy.deepcopy(after.stages)
        now = clock.now()
        running = {name: entry["value"] for name, entry in before.context.items()}
        for stage in stages:
            if stage["index"] in affected and not stage.get(HELD):
                stage[HELD] = True
                held.append(
                    HeldConfigRecord(
                        deployment_id=before.id,
                        stage=stage["index"],
                        context=running,
                        printers=before.printers,
                        held_at=now,
                    )
                )
        after = after._replace(stages=stages)
        notes["awaits_approval"] = sorted(s["index"] for s in stages if s.get(HELD))
        notes["policy"] = policies.DEPLOYMENT_CHANGES
    return after, held, notes


def hold(uow: UnitOfWork, held: list[HeldConfigRecord]) -> None:
    """Writes what `after_change` holds, in the change's unit of work."""
    for record in held:
        holds.hold(uow, record)


def reapprove(
    invocation: Invocation, record: DeploymentRecord, index: int, comment: str | None
) -> None:
    """A person approves what stage `index` runs now: the deployment's configuration as it is,
    which reaches its Runners if it was held."""
    caller = invocation.caller
    assert caller is not None
    stages = copy.deepcopy(record.stages)
    stage = stages[index]
    was_held = bool(stage.pop(HELD, False))
    stage.update(
        approved_by=caller.subject,
        approved_at=clock.rfc3339(clock.now()),
        **{DIGEST: current(record)},
    )
    after = record._replace(stages=stages, updated_at=clock.now())
    details = {"stage": index, "comment": comment, "changes": True, "released": was_held}
    with saving(record, audit.record(invocation, record.id, details=details)) as uow:
        store.save(uow, record, after)
        if was_held:
            holds.release(uow, record.id, index)
    runner_notices.groups_changed(stage["group_ids"])


def running(record: DeploymentRecord, group_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(context values, printer aliases) the Runners of `group_id` run: what is held for their
    stage while a change waits for approval, else the deployment's own."""
    stage = next((s for s in record.stages if group_id in s["group_ids"]), None)
    if stage is not None and stage.get(HELD):
        held = holds.get(record.id, stage["index"])
        if held is not None:
            return held.context, held.printers
    return {name: entry["value"] for name, entry in record.context.items()}, record.printers
