"""Who is calling on the agent channel: a Runner identified by its client certificate, never by a
user token. Only the certificate whose serial its record holds is accepted, so a removed
Runner is refused at once; what a request of it tells is recorded only while it exists."""

import re
from typing import Any

from etikett.domain.runners import certificates
from etikett.ids import id_pattern
from etikett.store import agent_reads
from etikett.store import runners as runner_store
from etikett.store.jobs import JobRecord
from etikett.store.runners import RunnerRecord
from etikett_engine.errors import CertificateRefused, ProblemCode


def removed() -> CertificateRefused:
    return CertificateRefused(
        "The Runner of this certificate was removed.", ProblemCode.RUNNER_REMOVED
    )


JOB_ID = re.compile(id_pattern("job"))


# The Runners this warm function admitted lately, by certificate serial. A request whose every
# write checks its Runner (active, with this certificate) in the write's own transaction need not
# read the Runner first: a claim of what the Runner received (claims.claim_each), an online
# Runner's beat (runner_agent.heartbeat). As many as a large fleet has (a record is about a
# kilobyte): its idle beats, 17 a second for 10,000 Runners, keep one or two instances warm,
# each of which then sees a Runner's next beat again.
_admitted_lately: dict[str, RunnerRecord] = {}
ADMITTED_KEPT = 10_000


def identify(certificate_pem: str, *, checked_in_write: bool = False) -> RunnerRecord:
    """The Runner of a current certificate. `checked_in_write`: the caller's writes check the
    Runner themselves, so one admitted lately is taken as it was read then."""
    presented = certificates.verify_client_certificate(certificate_pem)
    if checked_in_write:
        known = _admitted_lately.get(presented.serial)
        if known is not None and known.id == presented.runner_id:
            return known
    return _remembered(_admitted(presented, runner_store.get_runner(presented.runner_id)))


def still_admitted(runner: RunnerRecord) -> RunnerRecord:
    """After a write that checked the Runner failed: refused if its certificate no longer is
    the Runner's (revoked, removed); else the write failed for another reason, and the Runner
    is as read now."""
    _admitted_lately.pop(runner.certificate_serial or "", None)
    current = runner_store.get_runner(runner.id)
    if current is None:
        raise removed()
    if current.state != "active" or current.certificate_serial != runner.certificate_serial:
        raise CertificateRefused(
            "This certificate is no longer the Runner's.", ProblemCode.RUNNER_CERTIFICATE_REVOKED
        )
    return _remembered(current)


def _remembered(runner: RunnerRecord) -> RunnerRecord:
    if runner.certificate_serial:
        if len(_admitted_lately) >= ADMITTED_KEPT:
            _admitted_lately.pop(next(iter(_admitted_lately)))
        _admitted_lately[runner.certificate_serial] = runner
    return runner


def identify_for_job(certificate_pem: str, job_id: str) -> tuple[RunnerRecord, JobRecord | None]:
    """The Runner, and the job it reports on read with it (None: not found, or not an id)."""
    presented = certificates.verify_client_certificate(certificate_pem)
    if not JOB_ID.fullmatch(job_id):
        return _admitted(presented, runner_store.get_runner(presented.runner_id)), None
    runner, job = agent_reads.runner_with_job(presented.runner_id, job_id)
    return _remembered(_admitted(presented, runner)), job


def _admitted(
    presented: certificates.PresentedCertificate, runner: RunnerRecord | None
) -> RunnerRecord:
    if runner is None:
        raise removed()
    if runner.state != "active" or runner.certificate_serial != presented.serial:
        raise CertificateRefused(
            "This certificate is no longer the Runner's.", ProblemCode.RUNNER_CERTIFICATE_REVOKED
        )
    return runner


def seen(runner: RunnerRecord, **fields: Any) -> None:
    """Record what a request of the Runner tells, if the Runner still exists (a Runner removed
    since `identify` is never brought back)."""
    if not runner_store.touch_runner(runner.id, **fields):
        raise removed()
