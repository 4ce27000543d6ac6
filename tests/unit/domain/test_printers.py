"""Printers: declared by hand or adopted from a Runner's discovery findings, unique by name,
reachable only through an admitted Runner, their status as their own Runner reports it."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from pydantic import ValidationError

from etikett.domain.agent import claims, discovery, runner_agent, runner_messages
from etikett.domain.agent.discovery import DiscoveryRequest, GroupDiscoveryRequest
from etikett.domain.printers import printer_records, printers
from etikett.domain.printers.printers import NewPrinter
from etikett.domain.printing import raw_jobs
from etikett_engine.errors import EtikettError, ProblemCode
from unit.domain import build
from unit.domain.callers import human, operations, trail

pytestmark = pytest.mark.usefixtures("aws")


def _refused(code: ProblemCode, change: Any) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        change()
    assert refused.value.code == code, refused.value.detail
    return refused.value


def _declare(runner_id: str, name: str, **more: Any) -> printers.Printer:
    return printers.create(
        human("createPrinter", "operator"),
        NewPrinter(
            name=name,
            runner_id=runner_id,
            uri=more.pop("uri", "tcp://10.0.0.7:9100"),
            language=more.pop("language", "zpl"),
            dpi=more.pop("dpi", 300),
            **more,
        ),
    )


def _unique(name: str) -> str:
    return f"{name}-{build.group().id[-6:]}"


def test_a_declared_printer_is_created_with_its_audit_entry() -> None:
    runner = build.runner()
    name = _unique("Halle")
    created = _declare(runner.id, name, model="ZT411")
    assert (created.runner_id, created.uri, created.dpi, created.model) == (
        runner.id,
        "tcp://10.0.0.7:9100",
        300,
        "ZT411",
    )
    assert created.status is None
    assert printer_records.by_name(name).id == created.id
    assert trail(created.id)[0].details == {
        "name": name,
        "runner_id": runner.id,
        "uri": "tcp://10.0.0.7:9100",
        "finding_id": None,
    }
    assert [p.id for p in printers.list_printers(10, None, runner.id).items] == [created.id]


def test_names_are_unique_regardless_of_case_and_a_taken_name_writes_nothing() -> None:
    runner = build.runner()
    name = _unique("Versand")
    first = _declare(runner.id, name)
    error = _refused(ProblemCode.PRINTER_NAME_TAKEN, lambda: _declare(runner.id, name.upper()))
    assert error.params["name"] == name.upper()
    assert [p.id for p in printers.list_printers(10, None, runner.id).items] == [first.id]
    printers.delete(human("deletePrinter", "operator"), first.id)
    _refused(ProblemCode.PRINTER_NOT_FOUND, lambda: printer_records.by_name(name))
    assert _declare(runner.id, name.upper()).name == name.upper()  # the name is free again
    assert operations(first.id) == ["createPrinter", "deletePrinter"]


def test_a_printer_needs_an_admitted_runner() -> None:
    pending = build.enrolled(build.group().id, needs_approval=True)
    _refused(ProblemCode.RUNNER_NOT_ACTIVE, lambda: _declare(pending.runner_id, _unique("p")))
    _refused(ProblemCode.RUNNER_NOT_FOUND, lambda: _declare("run_missing", _unique("p")))
    _refused(ProblemCode.PRINTER_NOT_FOUND, lambda: printer_records.load("lbl_not_a_printer_id"))


def test_a_printer_is_declared_wholly_or_adopted_from_a_finding() -> None:
    for body in (
        {"name": "x", "runner_id": "run_1"},
        {"name": "x", "finding_id": "fnd_1", "uri": "tcp://10.0.0.1:9100"},
        {
            "name": "x",
            "runner_id": "run_1",
            "uri": "http://10.0.0.1",
            "language": "zpl",
            "dpi": 203,
        },
        {"name": "a/b", "finding_id": "fnd_1"},
    ):
        with pytest.raises(ValidationError):
            NewPrinter.model_validate(body)


def _discover(runner: Any, findings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A discovery job, claimed and answered by the Runner with `findings`."""
    job = discovery.discover_at(
        human("postRunnerDiscovery", "operator"),
        runner.id,
        DiscoveryRequest(targets=["10.0.0.0/30"]),
    )
    claimed = claims.claim(runner, runner_messages.ClaimRequest(wait_seconds=0, max_jobs=10))
    (mine,) = [c for c in claimed.jobs if c.job_id == job.id]
    assert mine.kind == "discovery" and mine.payload == {"targets": ["10.0.0.0/30"]}
    done = runner_agent.report(
        human("postRunnerJobReport"),
        runner,
        job.id,
        runner_messages.JobReport(
            receipt=mine.receipt, status="succeeded", final=True, result={"findings": findings}
        ),
    )
    assert done.status == "succeeded"
    return list((done.result or {})["findings"])


def test_a_printer_adopted_from_a_finding_takes_its_address_density_and_model() -> None:
    runner = build.runner()
    (finding,) = _discover(
        runner, [{"address": "10.0.0.2:9100", "model": "ZD421", "dpi": 300, "status": "ready"}]
    )
    assert finding["id"].startswith("fnd_")
    adopted = printers.create(
        human("createPrinter"), NewPrinter(name=_unique("gefunden"), finding_id=finding["id"])
    )
    assert (adopted.runner_id, adopted.uri, adopted.dpi, adopted.model) == (
        runner.id,
        "tcp://10.0.0.2:9100",
        300,
        "ZD421",
    )
    assert trail(adopted.id)[0].details["finding_id"] == finding["id"]  # type: ignore[index]
    _refused(
        ProblemCode.FINDING_NOT_FOUND,
        lambda: printers.create(human("createPrinter"), NewPrinter(name="x", finding_id="fnd_x")),
    )


def test_an_odd_density_in_a_finding_is_left_out_and_the_default_taken() -> None:
    runner = build.runner()
    (finding,) = _discover(runner, [{"address": "10.0.0.3:9100", "dpi": 250}])
    assert finding["dpi"] is None
    adopted = printers.create(
        human("createPrinter"), NewPrinter(name=_unique("ohne"), finding_id=finding["id"])
    )
    assert adopted.dpi == 203


def test_discovery_stays_on_private_networks_and_small_ranges() -> None:
    for targets in (["10.0.0.0/23"], ["10.0.0.1:99999"], ["10.0.0.0/24", "10.0.1.1"]):
        with pytest.raises(ValidationError):
            DiscoveryRequest(targets=targets)
    assert DiscoveryRequest(targets=["192.168.0.0/25", "drucker.local:6101"]).targets
    # Where the Runner may reach depends on its group (printer ports): checked by the operation.
    runner = build.runner()
    refused = _refused(
        ProblemCode.PRINTER_ADDRESS_REFUSED,
        lambda: discovery.discover_at(
            human("postRunnerDiscovery", "operator"),
            runner.id,
            DiscoveryRequest(targets=["8.8.8.8"]),
        ),
    )
    assert refused.params["target"] == "8.8.8.8"


def test_discovery_in_a_group_asks_each_online_runner() -> None:
    group = build.group()
    _refused(
        ProblemCode.RUNNER_GROUP_NO_ONLINE_RUNNER,
        lambda: discovery.discover_in_group(
            human("postRunnerGroupDiscovery"),
            GroupDiscoveryRequest(group_id=group.id, targets=["10.0.0.1"]),
        ),
    )
    online = {build.runner(group.id).id, build.runner(group.id).id}
    build.runner(group.id, online=False)
    asked = discovery.discover_in_group(
        human("postRunnerGroupDiscovery"),
        GroupDiscoveryRequest(group_id=group.id, targets=["10.0.0.1"]),
    )
    assert {job.runner_id for job in asked.jobs} == online
    assert {job.status for job in asked.jobs} == {"queued"}


def test_raw_bytes_go_only_to_a_printer_of_the_runner() -> None:
    runner, other = build.runner(), build.runner()
    printer = _declare(runner.id, _unique("roh"))
    data = base64.b64encode(b"^XA^FDhi^FS^XZ").decode()
    wrong = _refused(
        ProblemCode.REQUEST_INVALID,
        lambda: raw_jobs.submit_raw(
            human("postRunnerJob"),
            other.id,
            raw_jobs.RawJobRequest(printer_id=printer.id, data_base64=data),
        ),
    )
    assert wrong.params["fields"][0]["field"] == "body.printer_id"
    _refused(
        ProblemCode.REQUEST_INVALID,
        lambda: raw_jobs.submit_raw(
            human("postRunnerJob"),
            runner.id,
            raw_jobs.RawJobRequest(printer_id=printer.id, data_base64="not base64!"),
        ),
    )
    job = raw_jobs.submit_raw(
        human("postRunnerJob"),
        runner.id,
        raw_jobs.RawJobRequest(printer_id=printer.id, data_base64=data),
    )
    assert (job.kind, job.status, job.printer_id) == ("raw", "queued", printer.id)
    assert trail(job.id)[0].details == {
        "kind": "raw",
        "runner_id": runner.id,
        "printer_id": printer.id,
        "bytes": 14,
    }
    (claimed,) = claims.claim(runner, runner_messages.ClaimRequest(wait_seconds=0)).jobs
    assert base64.b64decode(claimed.data_base64 or "") == b"^XA^FDhi^FS^XZ"
    assert claimed.payload["printer"]["uri"] == "tcp://10.0.0.7:9100"


def test_only_a_printer_s_own_runner_reports_its_status() -> None:
    runner, other = build.runner(), build.runner()
    printer = _declare(runner.id, _unique("status"))
    beat = runner_messages.Heartbeat(printers=[{"printer_id": printer.id, "status": "paper_out"}])
    runner_agent.heartbeat(other, beat)
    assert printer_records.load(printer.id).status is None
    runner_agent.heartbeat(runner, beat)
    seen = printers.view(printer_records.load(printer.id))
    assert seen.status == "paper_out" and seen.status_at is not None
    config = runner_agent.configuration(runner)
    assert [p["printer_id"] for p in config.printers] == [printer.id]
    assert runner_agent.configuration(other).printers == []


def test_a_status_write_refused_for_another_reason_is_raised() -> None:
    """Only a failed condition means "not this Runner's printer": a write DynamoDB refuses for
    another reason (here: over its 400 KB item limit) is an error, not silently dropped."""
    from pynamodb.exceptions import UpdateError

    from etikett import clock
    from etikett.store import printers as stored

    runner, other = build.runner(), build.runner()
    printer = _declare(runner.id, _unique("refused"))
    assert stored.report_status(other.id, printer.id, "ready", clock.now()) is False
    with pytest.raises(UpdateError) as refused:
        stored.report_status(runner.id, printer.id, "x" * 450_000, clock.now())
    assert refused.value.cause_response_code == "ValidationException"
    assert printer_records.load(printer.id).status is None
