"""Enrolling Runners: one-time enrollment tokens per group, the exchange of a token and a CSR for
a client certificate, and approval of enrollments that need it."""

import hashlib
import secrets
from datetime import datetime, timedelta
from typing import Literal

from pydantic import ConfigDict, Field

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.runners import certificates
from etikett.domain.runners.runner_records import load_group
from etikett.ids import new_id
from etikett.settings import get_settings
from etikett.store import runner_enrollment as enrollment_store
from etikett.store import runner_queues, runners
from etikett.store.conditions import ConditionName
from etikett.store.pages import Page
from etikett.store.runner_enrollment import EnrollmentRecord, EnrollmentTokenRecord
from etikett.store.runners import RunnerRecord
from etikett.store.unit_of_work import UnitOfWork
from etikett_engine.errors import Conflict, InvalidRequest, NotFound, ProblemCode, Unauthenticated
from etikett_engine.model import Model

TOKEN_PREFIX = "etkr_"
SECRET_PREFIX = "etkn_"
DEFAULT_TOKEN_LIFETIME = timedelta(hours=24)
MAX_TOKEN_LIFETIME = timedelta(days=30)


def _hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class NewEnrollmentToken(Model):
    model_config = ConfigDict(extra="forbid")
    expires_at: datetime | None = Field(
        default=None, description="Default: in 24 hours; at most 30 days."
    )
    needs_approval: bool = Field(
        default=False, description="An admin must approve the enrollment first."
    )


class IssuedEnrollmentToken(Model):
    id: str
    group_id: str
    token: str = Field(description="One-time secret; shown in this answer only.")
    expires_at: str
    needs_approval: bool


class EnrollmentRequest(Model):
    model_config = ConfigDict(extra="forbid")
    csr_pem: str = Field(
        min_length=100,
        max_length=20000,
        description="PEM CSR of the key the Runner generated and keeps.",
    )
    hostname: str | None = Field(default=None, max_length=255)
    version: str | None = Field(default=None, max_length=64)
    name: str | None = Field(default=None, max_length=200, description="Default: the hostname.")


class Enrollment(Model):
    id: str
    group_id: str
    runner_id: str
    status: Literal["pending", "approved"]
    hostname: str | None
    version: str | None
    created_at: str
    approved_at: str | None = None
    approved_by: str | None = None
    certificate_pem: str | None = Field(default=None, description="Once approved.")
    ca_pem: str | None = Field(default=None, description="The service CA, to trust the server.")
    agent_url: str | None = Field(
        default=None,
        description="Once approved: the agent channel's mutual-TLS URL, where the Runner takes "
        "its jobs with the certificate (ETIKETT_AGENT_URL; the service's own URL if not set).",
    )


class EnrollmentCreated(Enrollment):
    secret: str = Field(description="Lets the Runner poll getRunnerEnrollment; shown only here.")


def issue_token(
    invocation: Invocation, group_id: str, request: NewEnrollmentToken
) -> IssuedEnrollmentToken:
    load_group(group_id)
    now = clock.now()
    expires_at = request.expires_at or now + DEFAULT_TOKEN_LIFETIME
    if expires_at.tzinfo is None:
        raise InvalidRequest.field("body.expires_at", "needs a time zone offset")
    if not now < expires_at <= now + MAX_TOKEN_LIFETIME:
        raise InvalidRequest.field("body.expires_at", "must lie in the next 30 days")
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token_id = new_id("enr").replace("enr_", "ent_")
    record = EnrollmentTokenRecord(
        token_hash=_hash(token),
        id=token_id,
        group_id=group_id,
        needs_approval=request.needs_approval,
        expires_at=expires_at,
        used_at=None,
        used_by=None,
        created_at=now,
        created_by=invocation.caller.subject if invocation.caller else "unknown",
    )
    details = {
        "token_id": token_id,
        "needs_approval": request.needs_approval,
        "expires_at": clock.rfc3339(expires_at),
    }
    with UnitOfWork(audit.record(invocation, group_id, details=details)) as uow:
        enrollment_store.add_enrollment_token(uow, record)
    return IssuedEnrollmentToken(
        id=token_id,
        group_id=group_id,
        token=token,
        expires_at=clock.rfc3339(expires_at),
        needs_approval=request.needs_approval,
    )


def _view(record: EnrollmentRecord, *, with_certificate: bool) -> Enrollment:
    return Enrollment(
        id=record.id,
        group_id=record.group_id,
        runner_id=record.runner_id,
        status=record.status,
        hostname=record.hostname,
        version=record.version,
        created_at=clock.rfc3339(record.created_at),
        approved_at=clock.rfc3339(record.approved_at) if record.approved_at else None,
        approved_by=record.approved_by,
        certificate_pem=record.certificate_pem if with_certificate else None,
        ca_pem=certificates.ca_pem() if with_certificate and record.certificate_pem else None,
        agent_url=get_settings().agent_url if with_certificate and record.certificate_pem else None,
    )


def enroll(invocation: Invocation, token: str, request: EnrollmentRequest) -> EnrollmentCreated:
    """Exchange a one-time token and a CSR: a Runner (pending, or admitted at once) and its
    enrollment; all or nothing, and the token is spent in the same transaction."""
    if not token.startswith(TOKEN_PREFIX):
        raise Unauthenticated(
            "Present an enrollment token as `Authorization: Bearer etkr_…`.",
            ProblemCode.ENROLLMENT_TOKEN_INVALID,
        )
    token_record = enrollment_store.get_enrollment_token(_hash(token))
    if token_record is None:
        raise Unauthenticated(
            "The enrollment token is unknown.", ProblemCode.ENROLLMENT_TOKEN_INVALID
        )
    now = clock.now()
    if token_record.used_at is not None:
        raise Unauthenticated(
            "The enrollment token was used already; issue a new one.",
            ProblemCode.ENROLLMENT_TOKEN_USED,
            token_id=token_record.id,
        )
    if token_record.expires_at <= now:
        raise Unauthenticated(
            "The enrollment token has expired; issue a new one.",
            ProblemCode.ENROLLMENT_TOKEN_EXPIRED,
            token_id=token_record.id,
            expired_at=clock.rfc3339(token_record.expires_at),
        )
    runner_id, enrollment_id = new_id("run"), new_id("enr")
    approved = not token_record.needs_approval
    certificate_pem = serial = None
    not_after = None
    if approved:
        certificate_pem, serial, not_after = certificates.sign_csr(request.csr_pem, runner_id)
    else:
        certificates.sign_csr(request.csr_pem, "run_check")  # refuse a bad CSR now, not later
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    queue_url = runner_queues.create(runner_id) if approved else None
    runner = RunnerRecord(
        id=runner_id,
        group_id=token_record.group_id,
        name=request.name or request.hostname or runner_id,
        hostname=request.hostname,
        version=request.version,
        state="active" if approved else "pending",
        certificate_serial=serial,
        certificate_not_after=not_after,
        queue_url=queue_url,
        last_seen_at=None,
        created_at=now,
    )
    enrollment = EnrollmentRecord(
        id=enrollment_id,
        group_id=token_record.group_id,
        runner_id=runner_id,
        status="approved" if approved else "pending",
        secret_hash=_hash(secret),
        csr_pem=request.csr_pem,
        certificate_pem=certificate_pem,
        hostname=request.hostname,
        version=request.version,
        created_at=now,
        approved_at=now if approved else None,
        approved_by="enrollment token" if approved else None,
    )
    entry = audit.record(
        invocation,
        runner_id,
        subject=f"enrollment-token:{token_record.id}",
        details={
            "enrollment_id": enrollment_id,
            "approved": approved,
            "hostname": request.hostname,
        },
    )
    used = Unauthenticated(
        "The enrollment token was used already; issue a new one.",
        ProblemCode.ENROLLMENT_TOKEN_USED,
        token_id=token_record.id,
    )
    try:
        with UnitOfWork(entry, errors={ConditionName.TOKEN_UNUSED: used}) as uow:
            enrollment_store.use_enrollment_token(uow, token_record, now, enrollment_id)
            runners.add_runner(uow, runner)
            enrollment_store.add_enrollment(uow, enrollment)
    except Exception:
        if queue_url:
            runner_queues.delete(queue_url)
        raise
    return EnrollmentCreated(**_view(enrollment, with_certificate=True).model_dump(), secret=secret)


def _load(enrollment_id: str) -> EnrollmentRecord:
    record = enrollment_store.get_enrollment(enrollment_id)
    if record is None:
        raise NotFound(
            f"No enrollment {enrollment_id}.",
            ProblemCode.ENROLLMENT_NOT_FOUND,
            enrollment_id=enrollment_id,
        )
    return record


def get(enrollment_id: str) -> Enrollment:
    return _view(_load(enrollment_id), with_certificate=True)


def get_with_secret(enrollment_id: str, secret: str) -> Enrollment:
    """The enrolling Runner polls with its enrollment secret until it is approved."""
    record = _load(enrollment_id)
    if not secrets.compare_digest(record.secret_hash, _hash(secret)):
        raise Unauthenticated(
            "The enrollment secret does not match.", ProblemCode.ENROLLMENT_SECRET_INVALID
        )
    return _view(record, with_certificate=True)


def list_enrollments(limit: int, cursor: str | None, status: str | None) -> Page[Enrollment]:
    found = enrollment_store.page_enrollments(limit, cursor, status)
    return Page(
        items=[_view(record, with_certificate=False) for record in found.items],
        next_cursor=found.next_cursor,
    )


def approve(invocation: Invocation, enrollment_id: str) -> Enrollment:
    record = _load(enrollment_id)
    if record.status == "approved":
        return _view(record, with_certificate=True)
    runner = runners.get_runner(record.runner_id)
    if runner is None:
        raise Conflict(
            "The enrollment's Runner was removed.",
            ProblemCode.ENROLLMENT_RUNNER_REMOVED,
            runner_id=record.runner_id,
        )
    certificate_pem, serial, not_after = certificates.sign_csr(record.csr_pem, record.runner_id)
    queue_url = runner_queues.create(record.runner_id)
    now = clock.now()
    caller = invocation.caller
    assert caller is not None
    approved = record._replace(
        status="approved",
        certificate_pem=certificate_pem,
        approved_at=now,
        approved_by=caller.subject,
    )
    admitted = runner._replace(
        state="active",
        certificate_serial=serial,
        certificate_not_after=not_after,
        queue_url=queue_url,
    )
    entry = audit.record(invocation, enrollment_id, details={"runner_id": record.runner_id})
    with UnitOfWork(entry) as uow:
        enrollment_store.update_enrollment(uow, record, approved)
        runners.update_runner(uow, runner, admitted)
    return get(enrollment_id)
