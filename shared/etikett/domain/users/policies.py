"""Service-wide policies. `aiFreigabePflicht` (on by default): versions authored by agents stay
drafts until a person approves them, and only a person may deploy or approve what agents made.
`deploymentChangesNeedApproval` (off by default): a deployment's context and printer changes
after an approval wait for the stage's next approval. Only an admin in a session changes them."""

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.store import policies
from etikett.store.policies import PolicyRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Forbidden, HumanRequired, NotFound, ProblemCode
from etikett_engine.model import Model

AI_APPROVAL = "aiFreigabePflicht"
DEPLOYMENT_CHANGES = "deploymentChangesNeedApproval"
DEFAULTS: dict[str, bool] = {AI_APPROVAL: True, DEPLOYMENT_CHANGES: False}
DESCRIPTIONS: dict[str, str] = {
    AI_APPROVAL: "Agent-authored label and form versions stay drafts until a person approves "
    "them; deploying a new automation and approving a deployment need a person; so do "
    "creating users, granting roles, setting passwords and reactivating users.",
    DEPLOYMENT_CHANGES: "A change of a deployment's context or printer aliases after a stage "
    "was approved does not reach that stage's Runners until the stage is approved again "
    "(postDeploymentApproval); they keep what they ran. Off: such a change reaches them at "
    "once. Either way it is audited and the deployment shows it as changed since approval.",
}


class Policy(Model):
    name: str
    enabled: bool
    description: str
    updated_at: str | None = None
    updated_by: str | None = None


class Policies(Model):
    items: list[Policy]


class PolicyChange(Model):
    model_config = ConfigDict(extra="forbid")
    enabled: bool = Field(description="Turn the policy on or off.")


def enabled(name: str) -> bool:
    record = policies.get(name)
    return record.enabled if record is not None else DEFAULTS[name]


def _view(name: str) -> Policy:
    record = policies.get(name)
    if record is None:
        return Policy(name=name, enabled=DEFAULTS[name], description=DESCRIPTIONS[name])
    return Policy(
        name=name,
        enabled=record.enabled,
        description=DESCRIPTIONS[name],
        updated_at=clock.rfc3339(record.updated_at),
        updated_by=record.updated_by,
    )


def require_person(invocation: Invocation, what: str) -> None:
    """Refuse `what` to any caller but a person in a session while `aiFreigabePflicht` is on.

    For what would let an agent make itself a person: a user it created, a password it set, a
    role it granted or an account it brought back can sign in to a human session, which
    approves what agents made. Taking access away (deactivating, revoking roles) stays open."""
    caller = invocation.caller
    if caller is not None and caller.actor == "human":
        return
    if enabled(AI_APPROVAL):
        raise HumanRequired(
            f"While {AI_APPROVAL} is on, only a person signed in with a session may {what}.",
            policy=AI_APPROVAL,
            operation_id=invocation.operation_id,
        )


def list_policies() -> Policies:
    return Policies(items=[_view(name) for name in DEFAULTS])


def put(invocation: Invocation, name: str, change: PolicyChange) -> Policy:
    """Only an admin in a human session reaches this (the route says so); refuse tokens anyway:
    the policy guards against agents, so no agent may switch it off."""
    if name not in DEFAULTS:
        raise NotFound(
            f"No policy {name!r}.", ProblemCode.POLICY_NOT_FOUND, name=name, known=sorted(DEFAULTS)
        )
    caller = invocation.caller
    if caller is None or caller.actor != "human":
        raise Forbidden(
            "Only a person signed in with a session may change a policy.",
            ProblemCode.AUTH_HUMAN_REQUIRED,
        )
    before = enabled(name)
    record = PolicyRecord(
        name=name, enabled=change.enabled, updated_at=clock.now(), updated_by=caller.subject
    )
    entry = audit.record(invocation, name, details={"before": before, "after": change.enabled})
    with UnitOfWork(entry) as uow:
        policies.put(uow, record)
    return _view(name)
