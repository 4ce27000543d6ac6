"""Wakes: a Runner that waits for them is woken for what is sent to its queue once its promise to
poll (its heartbeat with `awake`) is nearly over, and not while it still polls; a Runner that never
said it waits for wakes is never woken. The wake goes out through the IoT data plane (moto in this
process keeps what was published)."""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from moto.iotdata.models import iotdata_backends

from etikett import clock, settings
from etikett.domain.agent import runner_agent, runner_messages, runner_queue_access
from etikett.domain.printing import jobs, printing
from etikett.domain.printing.printing import PrintRequest
from etikett.domain.runners import runner_notices, runner_wakes, runners
from etikett.store import runner_queues
from etikett.store import runner_wakes as wake_store
from etikett.store import runners as runner_store
from etikett.store.runners import RunnerRecord
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain import build
from unit.domain.callers import human
from unit.domain.conftest import REGION, Aws

pytestmark = pytest.mark.usefixtures("aws")

AWAKE = 120


def _published() -> list[str]:
    return [topic for topic, _ in iotdata_backends["123456789012"][REGION].published_payloads]


@pytest.fixture(autouse=True)
def _no_wakes_yet() -> Iterator[None]:
    iotdata_backends["123456789012"][REGION].published_payloads.clear()
    yield


def _job(runner: RunnerRecord) -> jobs.Job:
    return jobs.submit(
        human("postRunnerJob", "operator"),
        runner.id,
        "raw",
        {"printer": {"name": "p"}},
        data=b"^XA^XZ",
    )


def _awake(runner: RunnerRecord) -> RunnerRecord:
    answer = runner_agent.heartbeat(runner, runner_messages.Heartbeat(awake=True))
    assert answer.awake_seconds == AWAKE
    record = runner_store.get_runner(runner.id)
    assert record is not None
    return record


def _later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    at = clock.now() + dt.timedelta(seconds=seconds)
    monkeypatch.setattr(clock, "now", lambda: at)


def _queued(aws: Aws, runner: RunnerRecord) -> list[dict[str, Any]]:
    assert runner.queue_url is not None
    answer = aws.client("sqs").receive_message(QueueUrl=runner.queue_url, MaxNumberOfMessages=10)
    return [json.loads(message["Body"]) for message in answer.get("Messages", [])]


def test_a_runner_that_never_said_it_waits_for_wakes_is_never_woken() -> None:
    runner = build.runner()
    assert runner.awake_until is None
    _job(runner)
    assert _published() == []


def test_the_awake_promise_is_recorded_and_kept_from_the_beat_on() -> None:
    runner = build.runner()
    before = clock.now()
    record = _awake(runner)
    assert record.awake_until is not None
    assert before + dt.timedelta(seconds=AWAKE) <= record.awake_until
    assert record.awake_until <= clock.now() + dt.timedelta(seconds=AWAKE)
    # A beat without `awake` leaves the promise as it is, and answers none.
    answer = runner_agent.heartbeat(record, runner_messages.Heartbeat())
    assert answer.awake_seconds is None
    again = runner_store.get_runner(runner.id)
    assert again is not None and again.awake_until == record.awake_until


def test_no_wake_while_the_runner_polls_and_one_once_its_promise_is_nearly_over(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = _awake(build.runner())
    _job(runner)
    assert _published() == []
    # Within MARGIN of the promise's end: the message might land after the polling stopped.
    _later(monkeypatch, AWAKE - runner_wakes.MARGIN.total_seconds() + 1)
    job = jobs.submit(
        human("postRunnerJob", "operator"),
        runner.id,
        "raw",
        {"printer": {"name": "p"}},
        data=b"^XA^XZ",
    )
    assert _published() == [wake_store.topic(runner.id)]
    assert job.id in [body.get("job_id") for body in _queued(aws, runner)]


def test_a_notice_wakes_a_runner_that_waits() -> None:
    runner = _awake(build.runner())
    runner_store.touch_runner(runner.id, awake_until=clock.now() - dt.timedelta(seconds=1))
    runner_notices.runner_changed(runner.id)
    assert _published() == [wake_store.topic(runner.id)]


def test_a_wake_that_cannot_be_published_leaves_the_job_on_the_queue(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner = _awake(build.runner())
    runner_store.touch_runner(runner.id, awake_until=clock.now() - dt.timedelta(seconds=1))

    def broker_away(runner_id: str) -> None:
        raise ConnectionError("the broker is away")

    monkeypatch.setattr(wake_store, "publish", broker_away)
    job = _job(runner)
    assert job.status == "queued"
    assert job.id in [body.get("job_id") for body in _queued(aws, runner)]


LABEL = {
    "size": {"width_mm": 50, "height_mm": 25},
    "dpi": 203,
    "variables": [{"name": "name", "required": True, "sample": "Muster"}],
    "objects": [{"id": "t", "type": "text", "x_mm": 2, "y_mm": 2, "expression": "name"}],
}


def _asleep_with_printer() -> tuple[RunnerRecord, str]:
    runner = _awake(build.runner())
    printer = build.printer(runner.id, f"zebra-{runner.id[-8:].lower()}").name  # a notice
    runner_store.touch_runner(runner.id, awake_until=clock.now() - dt.timedelta(seconds=1))
    return runner, printer


def test_a_print_wakes_its_runner_while_the_job_is_made_and_once(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    runner, printer = _asleep_with_printer()
    label = build.released_label(LABEL)
    sent = threading.Event()
    in_flight: list[bool] = []  # per wake: the job's message was sent while it was under way

    def publish(runner_id: str) -> None:
        in_flight.append(sent.wait(5))

    send = runner_queues.send

    def send_and_tell(*args: Any, **kwargs: Any) -> None:
        send(*args, **kwargs)
        sent.set()

    monkeypatch.setattr(wake_store, "publish", publish)
    monkeypatch.setattr(runner_queues, "send", send_and_tell)
    request = PrintRequest(label_id=label, printer=printer, data=[{"name": "A"}])
    accepted = printing.submit(human("postPrint", "operator"), request)
    # Published beside the job's making (counters, render, writes), not before its message only;
    # and one wake, not a second one when the message goes.
    assert in_flight == [True]
    assert accepted.job_id in [body.get("job_id") for body in _queued(aws, runner)]


def test_a_print_refused_before_anything_is_taken_wakes_no_runner() -> None:
    _, printer = _asleep_with_printer()
    label = build.released_label(LABEL)
    request = PrintRequest(label_id=label, printer=printer, data=[{"qty": 1}])
    with pytest.raises(EtikettError) as refused:
        printing.submit(human("postPrint", "operator"), request)
    assert refused.value.code == ProblemCode.PRINT_VARIABLES_INVALID
    assert _published() == []


def test_a_print_that_fails_once_its_runner_was_woken_still_waits_for_the_wake(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, printer = _asleep_with_printer()
    label = build.released_label(LABEL)
    published = threading.Event()

    def publish(runner_id: str) -> None:
        time.sleep(0.2)  # longer than the print takes to fail
        published.set()

    def no_serials(*args: Any) -> Any:
        raise RuntimeError("the counters' table is away")

    monkeypatch.setattr(wake_store, "publish", publish)
    monkeypatch.setattr(printing, "_take_serials", no_serials)
    request = PrintRequest(label_id=label, printer=printer, data=[{"name": "A"}])
    with pytest.raises(RuntimeError):
        printing.submit(human("postPrint", "operator"), request)
    assert published.is_set()  # a function does not answer with a wake in flight


@pytest.fixture
def wakes(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A service with a broker: IoT Core's endpoint, as the template names it."""
    monkeypatch.setenv("ETIKETT_RUNNER_WAKE_HOST", "abc123-ats.iot.eu-central-1.amazonaws.com")
    settings.reload()
    yield
    monkeypatch.delenv("ETIKETT_RUNNER_WAKE_HOST")
    settings.reload()


def _iot_certificate(aws: Aws, certificate_id: str) -> tuple[str, list[str]]:
    iot = aws.client("iot")
    described = iot.describe_certificate(certificateId=certificate_id)["certificateDescription"]
    policies = iot.list_attached_policies(target=described["certificateArn"])["policies"]
    return described["status"], [policy["policyName"] for policy in policies]


def test_no_wake_channel_where_the_service_has_no_broker() -> None:
    created = build.enrolled(build.group().id)
    runner = runner_store.get_runner(created.runner_id)
    assert runner is not None
    assert runner_queue_access.queue_access(runner, created.certificate_pem).wake is None
    again = runner_store.get_runner(runner.id)
    assert again is not None and again.wake_certificate_id is None  # nothing registered


@pytest.mark.usefixtures("wakes")
def test_the_wake_channel_comes_with_the_queue_and_the_certificate_is_registered_once(
    aws: Aws, monkeypatch: pytest.MonkeyPatch
) -> None:
    created = build.enrolled(build.group().id)
    runner = runner_store.get_runner(created.runner_id)
    assert runner is not None and created.certificate_pem is not None
    wake = runner_queue_access.queue_access(runner, created.certificate_pem).wake
    assert wake is not None
    assert (wake.host, wake.port) == ("abc123-ats.iot.eu-central-1.amazonaws.com", 8883)
    assert (wake.topic, wake.client_id) == (wake_store.topic(runner.id), runner.id)
    registered = runner_store.get_runner(runner.id)
    assert registered is not None and registered.wake_certificate_id is not None
    policy = settings.get_settings().runner_wake_policy
    assert policy  # the template's RunnerWakePolicy, provisioned in moto's IoT
    assert _iot_certificate(aws, registered.wake_certificate_id) == ("ACTIVE", [policy])

    # Asked again (credentials are renewed hourly): the same registration, not another.
    def registered_again(certificate_pem: str, policy: str) -> str:
        raise AssertionError("registered again")

    monkeypatch.setattr(wake_store, "register", registered_again)
    assert runner_queue_access.queue_access(registered, created.certificate_pem).wake == wake
    certificates = aws.client("iot").list_certificates()["certificates"]
    assert [c["certificateId"] for c in certificates].count(registered.wake_certificate_id) == 1


@pytest.mark.usefixtures("wakes")
def test_removing_a_runner_deactivates_its_iot_certificate(aws: Aws) -> None:
    created = build.enrolled(build.group().id)
    runner = runner_store.get_runner(created.runner_id)
    assert runner is not None
    runner_queue_access.queue_access(runner, created.certificate_pem)
    registered = runner_store.get_runner(runner.id)
    assert registered is not None and registered.wake_certificate_id is not None
    runners.remove_runner(human("deleteRunner", "admin"), runner.id)
    status, _ = _iot_certificate(aws, registered.wake_certificate_id)
    assert status == "INACTIVE"


@pytest.mark.usefixtures("wakes")
def test_a_certificate_iot_core_already_has_is_taken_as_registered(aws: Aws) -> None:
    # The record was lost after IoT Core took the certificate (a timeout, a restore): asked
    # again, IoT Core answers that it exists, with its id, and the policy is attached to it.
    created = build.enrolled(build.group().id)
    assert created.certificate_pem is not None
    policy = settings.get_settings().runner_wake_policy
    first = wake_store.register(created.certificate_pem, policy)
    again = wake_store.register(created.certificate_pem, policy)
    assert again == first
    assert _iot_certificate(aws, again) == ("ACTIVE", [policy])
