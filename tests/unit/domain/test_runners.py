"""Runner groups, enrollment (one-time tokens, stored hashed), Runners' identity by certificate,
their online state, removal, and context parameters with their precedence."""

from __future__ import annotations

import datetime as dt
import hashlib
from typing import Any

import pytest

from etikett import clock
from etikett.domain import deployments
from etikett.domain.agent import admission, runner_agent, runner_flows, runner_messages
from etikett.domain.printing import jobs
from etikett.domain.runners import runner_enrollment, runner_records, runners
from etikett.domain.runners.runner_enrollment import EnrollmentRequest, NewEnrollmentToken
from etikett.domain.runners.runners import ContextValue
from etikett.settings import get_settings
from etikett.store import runner_context, runner_queues
from etikett.store import runner_enrollment as enrollment_store
from etikett.store import runners as runner_store
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain import aws_calls, build
from unit.domain.callers import human, operations, trail
from unit.domain.conftest import Aws

pytestmark = pytest.mark.usefixtures("aws")


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


def _token(group_id: str, **more: Any) -> runner_enrollment.IssuedEnrollmentToken:
    return runner_enrollment.issue_token(
        human("postRunnerEnrollmentToken", "admin"), group_id, NewEnrollmentToken(**more)
    )


def _enroll(token: str, csr: str | None = None) -> runner_enrollment.EnrollmentCreated:
    return runner_enrollment.enroll(
        human("postRunnerEnrollment"),
        token,
        EnrollmentRequest(csr_pem=csr or build.csr(), hostname="lager-pc", version="1.2"),
    )


def _later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """The clock moves on by `seconds` (expiry and offline rules read `clock.now`)."""
    now = clock.now
    monkeypatch.setattr(clock, "now", lambda: now() + dt.timedelta(seconds=seconds))


def _queues(aws: Aws, runner_id: str) -> list[str]:
    name = runner_queues.queue_name(runner_id)
    return aws.client("sqs").list_queues(QueueNamePrefix=name).get("QueueUrls", [])


# --- groups ---------------------------------------------------------------------------------


def test_a_group_is_created_with_its_audit_entry_and_listed() -> None:
    created = runners.create_group(
        human("createRunnerGroup", "operator"),
        runners.NewRunnerGroup(name="Halle", description="2"),
    )
    assert (created.name, created.description) == ("Halle", "2")
    assert trail(created.id)[0].details == {"name": "Halle", "printer_ports": []}
    seen, cursor = [], None
    while True:
        page = runners.list_groups(2, cursor)
        seen += [g.id for g in page.items]
        if (cursor := page.next_cursor) is None:
            break
    assert created.id in seen and len(seen) == len(set(seen))


# --- enrollment tokens ----------------------------------------------------------------------


def test_an_enrollment_token_is_shown_once_and_stored_only_as_its_hash(aws: Aws) -> None:
    group = build.group()
    issued = _token(group.id)
    assert issued.token.startswith("etkr_") and len(issued.token) > 40
    stored = enrollment_store.get_enrollment_token(
        hashlib.sha256(issued.token.encode()).hexdigest()
    )
    assert stored is not None and stored.id == issued.id and stored.used_at is None
    dynamodb = aws.client("dynamodb")
    items = dynamodb.scan(TableName=aws.ref("RunnersTable"))["Items"]
    assert issued.token not in str(items)
    (entry,) = [e for e in trail(group.id) if e.operation_id == "postRunnerEnrollmentToken"]
    assert issued.token not in str(entry.details) and entry.details["token_id"] == issued.id


def test_a_token_expires_within_thirty_days_and_names_an_existing_group() -> None:
    group = build.group()
    now = clock.now()
    for when in (now - dt.timedelta(minutes=1), now + dt.timedelta(days=31)):
        error = _refused(ProblemCode.REQUEST_INVALID, lambda w=when: _token(group.id, expires_at=w))
        assert error.params["fields"][0]["field"] == "body.expires_at"
    _refused(ProblemCode.RUNNER_GROUP_NOT_FOUND, lambda: _token("rgp_missing"))


def test_a_token_enrolls_one_runner_once(aws: Aws) -> None:
    group = build.group()
    issued = _token(group.id)
    created = _enroll(issued.token)
    assert created.status == "approved" and created.secret.startswith("etkn_")
    assert created.certificate_pem and created.ca_pem and "BEGIN CERTIFICATE" in created.ca_pem
    runner = runners.get_runner(created.runner_id)
    assert (runner.group_id, runner.name, runner.version) == (group.id, "lager-pc", "1.2")
    assert runner.status == "offline"  # admitted, but not heard from yet
    assert len(_queues(aws, created.runner_id)) == 1
    error = _refused(ProblemCode.ENROLLMENT_TOKEN_USED, lambda: _enroll(issued.token))
    assert error.params["token_id"] == issued.id
    assert [r.id for r in runners.list_runners(10, None, group.id).items] == [created.runner_id]
    (entry,) = trail(created.runner_id)
    assert entry.subject == f"enrollment-token:{issued.id}"


def test_unknown_malformed_and_expired_tokens_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    group = build.group()
    _refused(ProblemCode.ENROLLMENT_TOKEN_INVALID, lambda: _enroll("not-a-token"))
    _refused(ProblemCode.ENROLLMENT_TOKEN_INVALID, lambda: _enroll("etkr_unknown"))
    issued = _token(group.id, expires_at=clock.now() + dt.timedelta(hours=1))
    _later(monkeypatch, 3601)
    _refused(ProblemCode.ENROLLMENT_TOKEN_EXPIRED, lambda: _enroll(issued.token))
    assert runners.list_runners(10, None, group.id).items == []


def test_a_bad_csr_is_refused_and_leaves_the_token_unspent() -> None:
    group = build.group()
    issued = _token(group.id)
    bad = (
        "-----BEGIN CERTIFICATE REQUEST-----\n"
        + "A" * 120
        + "\n-----END CERTIFICATE REQUEST-----\n"
    )
    error = _refused(ProblemCode.REQUEST_INVALID, lambda: _enroll(issued.token, bad))
    assert error.params["fields"][0]["field"] == "body.csr_pem"
    assert runners.list_runners(10, None, group.id).items == []
    assert _enroll(issued.token).status == "approved"


def test_of_two_enrollments_racing_for_one_token_the_loser_leaves_nothing_behind(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    group = build.group()
    issued = _token(group.id)
    read = enrollment_store.get_enrollment_token
    winner: list[str] = []

    def read_then_lose_the_race(token_hash: str) -> Any:
        stale = read(token_hash)
        monkeypatch.setattr(enrollment_store, "get_enrollment_token", read)
        winner.append(_enroll(issued.token).runner_id)
        return stale

    monkeypatch.setattr(enrollment_store, "get_enrollment_token", read_then_lose_the_race)
    _refused(ProblemCode.ENROLLMENT_TOKEN_USED, lambda: _enroll(issued.token))
    assert [r.id for r in runners.list_runners(10, None, group.id).items] == winner
    runner_queue_prefix = runner_queues.queue_name("")
    all_queues = aws.client("sqs").list_queues(QueueNamePrefix=runner_queue_prefix)["QueueUrls"]
    ours = {url for url in all_queues if any(url.endswith(r.lower()) for r in winner)}
    assert len(ours) == 1  # the loser's queue was deleted again
    assert len([u for u in all_queues if u not in ours]) == len(
        [r for r in runner_store.page_runners(200, None, None).items if r.queue_url not in ours]
    )


# --- approval of enrollments ----------------------------------------------------------------


def test_an_enrollment_that_needs_approval_waits_for_an_admin(aws: Aws) -> None:
    group = build.group()
    created = _enroll(_token(group.id, needs_approval=True).token)
    assert created.status == "pending" and created.certificate_pem is None
    assert runners.get_runner(created.runner_id).status == "pending"
    assert _queues(aws, created.runner_id) == []
    _refused(
        ProblemCode.ENROLLMENT_SECRET_INVALID,
        lambda: runner_enrollment.get_with_secret(created.id, "etkn_wrong"),
    )
    assert runner_enrollment.get_with_secret(created.id, created.secret).status == "pending"
    pending = runner_enrollment.list_enrollments(200, None, "pending").items
    assert created.id in {e.id for e in pending}

    admin = human("postRunnerEnrollmentApproval", "admin", subject="ada")
    approved = runner_enrollment.approve(admin, created.id)
    assert approved.status == "approved" and approved.approved_by == "ada"
    assert approved.certificate_pem is not None
    assert runner_enrollment.approve(admin, created.id).certificate_pem == approved.certificate_pem
    record = runner_store.get_runner(created.runner_id)
    assert record is not None and record.state == "active" and record.queue_url
    assert operations(created.id) == ["postRunnerEnrollmentApproval"]
    fetched = runner_enrollment.get_with_secret(created.id, created.secret)
    assert fetched.certificate_pem == approved.certificate_pem


def test_an_enrollment_whose_runner_was_removed_cannot_be_approved() -> None:
    created = _enroll(_token(build.group().id, needs_approval=True).token)
    runners.remove_runner(human("deleteRunner", "admin"), created.runner_id)
    _refused(
        ProblemCode.ENROLLMENT_RUNNER_REMOVED,
        lambda: runner_enrollment.approve(human("approve", "admin"), created.id),
    )
    _refused(
        ProblemCode.ENROLLMENT_NOT_FOUND,
        lambda: runner_enrollment.approve(human("approve", "admin"), "enr_missing"),
    )


# --- identity, heartbeat, removal -----------------------------------------------------------


def test_a_runner_is_identified_by_its_certificate_until_it_is_removed(aws: Aws) -> None:
    created = build.enrolled(build.group().id)
    assert created.certificate_pem is not None
    assert admission.identify(created.certificate_pem).id == created.runner_id
    runners.put_context(human("put"), created.runner_id, "line", ContextValue(value=1))
    runners.remove_runner(human("deleteRunner", "admin"), created.runner_id)
    _refused(ProblemCode.RUNNER_REMOVED, lambda: admission.identify(created.certificate_pem))
    _refused(ProblemCode.RUNNER_NOT_FOUND, lambda: runners.get_runner(created.runner_id))
    assert _queues(aws, created.runner_id) == []
    assert runner_context.context_of(created.runner_id) == []
    assert operations(created.runner_id)[-1] == "deleteRunner"


def test_a_report_reads_its_runner_and_its_job_in_one_round_trip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    created = build.enrolled(build.group().id)
    assert created.certificate_pem is not None
    job = jobs.submit(human("postRunnerJob", "operator"), created.runner_id, "raw", {}, data=b"x")
    calls = aws_calls.recorded(monkeypatch)
    runner, read = admission.identify_for_job(created.certificate_pem, job.id)
    assert (runner.id, read.id if read else None) == (created.runner_id, job.id)
    assert calls == ["TransactGetItems"]
    absent = "job_" + job.id.removeprefix("job_")[::-1]  # well-formed, but no such job
    assert admission.identify_for_job(created.certificate_pem, absent)[1] is None
    del calls[:]
    assert admission.identify_for_job(created.certificate_pem, "not a job id")[1] is None
    assert calls == ["GetItem"]  # the Runner alone: no key is built from a malformed id
    runners.remove_runner(human("deleteRunner", "admin"), created.runner_id)
    _refused(
        ProblemCode.RUNNER_REMOVED,
        lambda: admission.identify_for_job(created.certificate_pem, job.id),
    )


def test_a_certificate_of_another_ca_is_refused() -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    build.enrolled(build.group().id)  # the service CA exists
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "run_01JFAKEFAKEFAKEFAKEFAKEFAK")])
    now = clock.now()
    forged = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + dt.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    pem = forged.public_bytes(serialization.Encoding.PEM).decode()
    _refused(ProblemCode.RUNNER_CERTIFICATE_INVALID, lambda: admission.identify(pem))


def test_a_heartbeat_keeps_a_runner_online_for_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    runner = build.runner(build.group().id)
    answer = runner_agent.heartbeat(
        runner, runner_messages.Heartbeat(hostname="neu", version="2.0")
    )
    assert answer.status == "online"
    seen = runners.get_runner(runner.id)
    assert (seen.status, seen.hostname, seen.version) == ("online", "neu", "2.0")
    _later(monkeypatch, 1499)  # an idle Runner beats every 10 min: 2.5 beats (25 min) pass
    assert runners.get_runner(runner.id).status == "online"
    _later(monkeypatch, 2)  # the clock moves on from there: 1501 s
    assert runners.get_runner(runner.id).status == "offline"
    assert runner_records.online_runners(runner.group_id) == []


def test_status_since_is_the_last_contact_offline_and_the_return_online(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from etikett.store import runners as runner_store

    offline_after = get_settings().runner_offline_seconds
    runner = build.runner(build.group().id)
    _later(monkeypatch, offline_after + 1)  # made online: offline by now
    runner_agent.heartbeat(runner_store.get_runner(runner.id), runner_messages.Heartbeat())
    first = runners.get_runner(runner.id)
    assert first.status_since == first.last_seen_at
    runner_agent.heartbeat(runner_store.get_runner(runner.id), runner_messages.Heartbeat())
    assert runners.get_runner(runner.id).status_since == first.status_since  # still online
    _later(monkeypatch, 2 * offline_after + 2)
    away = runners.get_runner(runner.id)
    assert away.status == "offline" and away.status_since == away.last_seen_at  # last contact
    assert away.last_seen_at != first.last_seen_at
    runner_agent.heartbeat(runner_store.get_runner(runner.id), runner_messages.Heartbeat())
    back = runners.get_runner(runner.id)
    assert back.status == "online" and back.status_since == back.last_seen_at
    assert back.status_since != first.status_since


def test_a_removed_runner_s_heartbeat_does_not_bring_it_back() -> None:
    runner = build.runner(build.group().id)
    runners.remove_runner(human("deleteRunner", "admin"), runner.id)
    _refused(
        ProblemCode.RUNNER_REMOVED,
        lambda: runner_agent.heartbeat(runner, runner_messages.Heartbeat()),
    )
    assert runner_store.get_runner(runner.id) is None


def test_an_online_runner_s_beat_is_one_write_that_checks_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A warm function's Runner as admitted minutes ago: its beat is one conditional write (no
    read), and its "online since" stays."""
    admitted = build.runner(build.group().id)  # online by a beat
    since = runners.get_runner(admitted.id).status_since
    _later(monkeypatch, 600)
    calls = aws_calls.recorded(monkeypatch)
    beat = runner_messages.Heartbeat(hostname="halle-2", version="2.1")
    assert runner_agent.heartbeat(admitted, beat, checked=True).status == "online"
    assert calls == ["UpdateItem"]
    now = runners.get_runner(admitted.id)
    assert (now.hostname, now.version, now.status_since) == ("halle-2", "2.1", since)
    assert now.last_seen_at != admitted.last_seen_at


def test_a_checked_beat_of_a_runner_offline_meanwhile_marks_its_return(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    admitted = build.runner(build.group().id)
    _later(monkeypatch, get_settings().runner_offline_seconds + 1)
    assert runners.get_runner(admitted.id).status == "offline"
    runner_agent.heartbeat(admitted, runner_messages.Heartbeat(), checked=True)
    back = runners.get_runner(admitted.id)
    assert back.status == "online" and back.status_since == back.last_seen_at


def test_a_checked_beat_of_a_replaced_certificate_or_a_removed_runner_is_refused() -> None:
    admitted = build.runner(build.group().id)
    before = runners.get_runner(admitted.id).last_seen_at
    runner_store.touch_runner(admitted.id, certificate_serial="a-newer-certificate")
    _refused(
        ProblemCode.RUNNER_CERTIFICATE_REVOKED,
        lambda: runner_agent.heartbeat(admitted, runner_messages.Heartbeat(), checked=True),
    )
    assert runners.get_runner(admitted.id).last_seen_at == before
    other = build.runner(build.group().id)
    runners.remove_runner(human("deleteRunner", "admin"), other.id)
    _refused(
        ProblemCode.RUNNER_REMOVED,
        lambda: runner_agent.heartbeat(other, runner_messages.Heartbeat(), checked=True),
    )
    assert runner_store.get_runner(other.id) is None


# --- context parameters ---------------------------------------------------------------------


def test_context_parameters_of_groups_and_runners_are_audited_and_revised() -> None:
    group = build.group()
    operator = human("putRunnerGroupContextParameter", "operator", subject="olga")
    first = runners.put_context(operator, group.id, "site", ContextValue(value="Nord"))
    assert (first.value, first.updated_by) == ("Nord", "olga")
    runners.put_context(operator, group.id, "site", ContextValue(value="Süd"))
    assert runner_context.get_context(group.id, "site").revision == 2  # type: ignore[union-attr]
    assert trail(group.id)[-1].details == {"name": "site", "before": "Nord", "after": "Süd"}
    runners.delete_context(human("deleteRunnerGroupContextParameter"), group.id, "site")
    assert runners.list_context(group.id, 10, None).items == []
    _refused(
        ProblemCode.CONTEXT_NOT_FOUND,
        lambda: runners.delete_context(human("x"), group.id, "site"),
    )
    _refused(
        ProblemCode.RUNNER_GROUP_NOT_FOUND,
        lambda: runners.put_context(operator, "rgp_missing", "a", ContextValue(value=1)),
    )
    _refused(
        ProblemCode.RUNNER_NOT_FOUND,
        lambda: runners.put_context(operator, "run_missing", "a", ContextValue(value=1)),
    )


def test_the_runner_s_own_context_wins_over_its_group_s_and_both_over_a_deployment_s() -> None:
    group = build.group()
    runner = build.runner(group.id)
    put = human("putContextParameter", "operator")
    runners.put_context(put, group.id, "site", ContextValue(value="group"))
    runners.put_context(put, group.id, "line", ContextValue(value="group"))
    runners.put_context(put, runner.id, "line", ContextValue(value="runner"))
    assert runner_agent.configuration(runner).context == {"site": "group", "line": "runner"}

    created = deployments.create(
        human("createDeployment", "operator"),
        deployments.NewDeployment(
            flow_id=build.flow().id,
            version=1,
            stages=[deployments.StageIn(group_ids=[group.id])],
            context={"site": "deployment", "line": "deployment", "shift": "deployment"},
        ),
    )
    deployments.approve(
        human("postDeploymentApproval", "approver"), created.id, deployments.Approval(stage=0)
    )
    (deployed,) = runner_flows.deployed_flows(runner)
    assert deployed.context == {"site": "group", "line": "runner", "shift": "deployment"}
