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


def identify(certificate_pem: str) -> RunnerRecord:
    presented = certificates.verify_client_certificate(certificate_pem)
    return _admitted(presented, runner_store.get_runner(presented.runner_id))


def identify_for_job(certificate_pem: str, job_id: str) -> tuple[RunnerRecord, JobRecord | None]:
    """The Runner, and the job it reports on read with it (None: not found, or not an id)."""
    presented = certificates.verify_client_certificate(certificate_pem)
    if not JOB_ID.fullmatch(job_id):
        return _admitted(presented, runner_store.get_runner(presented.runner_id)), None
    runner, job = agent_reads.runner_with_job(presented.runner_id, job_id)
    return _admitted(presented, runner), job


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
