"""The sync of offline prints (postRunnerOfflinePrints, the agent channel, issue 27): what a
Runner's journal holds is archived exactly once — uploaded twice, or twice at once as after a
lost answer — with one job, one archive entry per record, one audit entry and one webhook per
print, all marked as printed offline at the Runner's time; a counter value outside the Runner's
own blocks, or a deployment to another group, is refused; a print of a deployment rolled back
meanwhile is archived and flagged."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from etikett_runner.channel import AgentChannel
from etikett_runner.connectivity import Connectivity
from etikett_runner.offline_prints import OfflinePrint, OfflinePrints, new_print_id
from etikett_runner.offline_sync import OfflineSync

from integration.webhooks.receiver import Receiver
from support.client import Api, problem, unique
from support.offline_site import (
    deploy,
    enroll,
    label_with_counter,
    offline_print,
    printer_of,
    reserve,
)
from support.server import DevServer


@pytest.fixture(scope="module")
def hall(admin: Api, dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Runners A and B of one group running a deployment that may print offline, with a
    printer of A's; Runner C of another group with a deployment of its own."""
    folder = tmp_path_factory.mktemp("offline-sync")
    counter = unique("lot").replace("-", "_")
    made = admin.post("/counters", json={"name": counter, "start": 1, "format": "000000"})
    assert made.status_code == 201, made.text
    label = label_with_counter(admin, counter)
    group = admin.post("/runner-groups", json={"name": unique("hall")}).json()["id"]
    a, agent_a, site_a = enroll(admin, dev_server, folder, group)
    _, agent_b, _ = enroll(admin, dev_server, folder, group)
    other = admin.post("/runner-groups", json={"name": unique("other")}).json()["id"]
    c, agent_c, _ = enroll(admin, dev_server, folder, other)
    printer = printer_of(admin, a)
    deployment = deploy(admin, label, group, printer["id"])
    deployment_c = deploy(admin, label, other, printer_of(admin, c)["id"])
    return {
        "counter": counter,
        "label": label,
        "printer": printer,
        "deployment": deployment,
        "deployment_c": deployment_c,
        "a": (a, agent_a),
        "site_a": site_a,
        "b": agent_b,
        "c": agent_c,
    }


def _upload(agent: httpx.Client, prints: list[OfflinePrint]) -> list[dict[str, Any]]:
    answer = agent.post("/offline-prints", json={"prints": [p.to_json() for p in prints]})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["prints"])


def test_offline_prints_are_archived_exactly_once_with_their_time_webhook_and_audit(
    admin: Api, hall: Any, tmp_path: Path
) -> None:
    counter = hall["counter"]
    runner_id, agent = hall["a"]
    block = reserve(agent, counter, 6)
    first = block["first"]
    journal = OfflinePrints(tmp_path)  # as the Runner journals them while the service is away
    printed = [
        offline_print(hall, [first, first + 1]),
        offline_print(hall, [first + 2]),
        offline_print(hall, [first + 3]),  # the Runner stopped before the printer answered
        offline_print(hall, [first + 4]),
    ]
    for taken in printed:
        journal.record(taken)
    journal.settle(printed[0].id, "sent")
    journal.settle(printed[1].id, "failed", "printer_unreachable")
    journal.settle(printed[3].id, "sent")
    pending = journal.unsynced()
    assert [p.outcome for p in pending] == ["sent", "failed", None, "sent"]

    with Receiver() as receiver:
        hook = admin.post(
            "/webhooks", json={"url": receiver.url, "events": ["print.sent", "print.failed"]}
        )
        assert hook.status_code == 201, hook.text
        try:
            answers = _upload(agent, pending[:3])
            assert [a["result"] for a in answers] == ["accepted"] * 3
            assert [a["id"] for a in answers] == [p.id for p in pending[:3]]
            assert all(a["flag"] is None and a["job_id"].startswith("job_") for a in answers)
            # Sent again (its answer lost): nothing more is written.
            again = _upload(agent, pending[:3])
            assert [(a["result"], a["job_id"]) for a in again] == [
                ("already", a["job_id"]) for a in answers
            ]
            # The last one twice at once, as a retry racing its first attempt.
            with ThreadPoolExecutor(2) as pool:
                racing = list(pool.map(lambda _: _upload(agent, pending[3:]), range(2)))
            assert sorted(r[0]["result"] for r in racing) == ["accepted", "already"]
            jobs = [a["job_id"] for a in answers] + [racing[0][0]["job_id"]]

            # One webhook per print, marked offline with its time; none twice.
            def mine(r: Any) -> bool:
                return json.loads(r.body)["data"]["job_id"] in jobs

            receiver.wait_for(lambda rs: len([r for r in rs if mine(r)]) >= 4)
            time.sleep(1.5)
            events = [json.loads(r.body) for r in receiver.requests if mine(r)]
        finally:
            admin.delete(f"/webhooks/{hook.json()['id']}")
    assert sorted(e["data"]["job_id"] for e in events) == sorted(jobs)
    by_job = {e["data"]["job_id"]: e for e in events}
    assert [by_job[j]["type"] for j in jobs] == [
        "print.sent",
        "print.failed",
        "print.failed",
        "print.sent",
    ]
    assert [by_job[j]["data"]["reason"] for j in jobs] == [
        None,
        "printer_unreachable",
        "offline_outcome_unknown",
        None,
    ]
    assert all(e["data"]["printed_offline"] is True for e in events)
    assert {e["data"]["printed_at"] for e in events} == {printed[0].printed_at}

    # The archive holds exactly those labels, with their values and print time.
    archived = []
    for job_id, taken in zip(jobs, printed, strict=True):
        job = admin.get(f"/jobs/{job_id}").json()
        assert job["printed_offline"] is True and job["printed_at"] == taken.printed_at
        assert job["runner_id"] == runner_id and job["finished_at"] is not None
        entries = admin.get("/print-archive", params={"job_id": job_id}).json()["items"]
        assert [e["variables"] for e in entries] == [r.variables for r in taken.records]
        for entry in entries:
            assert entry["printed_offline"] is True
            assert entry["printed_at"] == entry["created_at"] == taken.printed_at
            assert entry["actor"] == {"actor": "service", "subject": "runner:site-pc"}
        archived += [int(e["serials"][counter]) for e in entries]
    assert sorted(archived) == list(range(first, first + 5))
    unknown = admin.get(f"/jobs/{jobs[2]}").json()
    assert (unknown["status"], unknown["outcome_reason"]) == ("failed", "offline_outcome_unknown")
    assert "may or may not be on paper" in unknown["messages"][-1]["text"]
    label_entries = admin.get("/print-archive", params={"label_id": hall["label"]}).json()
    assert len([e for e in label_entries["items"] if e["job_id"] in jobs]) == 5

    # One audit entry per print, on its job, by the Runner.
    for job_id, taken in zip(jobs, printed, strict=True):
        trail = admin.get(
            "/audit-log", params={"target": job_id, "operation": "postRunnerOfflinePrints"}
        ).json()["items"]
        assert len(trail) == 1
        assert trail[0]["details"]["print_id"] == taken.id
        assert trail[0]["details"]["printed_at"] == taken.printed_at

    journal.mark_synced([a["id"] for a in answers] + [pending[3].id])
    assert journal.status() == {"unsynced_labels": 0, "oldest_unsynced_at": None}


def test_values_outside_the_runners_blocks_and_foreign_deployments_are_refused(
    admin: Api, hall: Any
) -> None:
    counter = hall["counter"]
    _, agent = hall["a"]
    mine = reserve(agent, counter, 2)
    theirs = reserve(hall["b"], counter, 2)  # Runner B's, of the same group
    beyond = theirs["first"] + 1000  # in nobody's block
    good = offline_print(hall, [mine["first"]])
    stolen = offline_print(hall, [theirs["first"]])
    unreserved = offline_print(hall, [mine["first"] + 1, beyond])
    answers = _upload(agent, [stolen, good, unreserved])
    assert [(a["result"], a["reason"]) for a in answers] == [
        ("refused", "counter_value_not_reserved"),
        ("accepted", None),
        ("refused", "counter_value_not_reserved"),
    ]
    assert str(beyond) in answers[2]["detail"]
    # Refused means nothing was written: no job, no entries.
    job_of = "job_" + stolen.id.removeprefix("opr_")
    problem(admin.get(f"/jobs/{job_of}"), 404, "job.not_found")
    assert admin.get("/print-archive", params={"job_id": job_of}).json()["items"] == []

    # Runner C's group does not run A's deployment; A may not print to C's deployment.
    foreign = _upload(hall["c"], [offline_print(hall, [mine["first"] + 1])])
    assert (foreign[0]["result"], foreign[0]["reason"]) == ("refused", "deployment_not_in_group")
    deployment_c = hall["deployment_c"]
    other_flow = offline_print(
        hall, [mine["first"] + 1], deployment_id=deployment_c["id"], flow_id=deployment_c["flow_id"]
    )
    assert _upload(agent, [other_flow])[0]["reason"] == "deployment_not_in_group"
    # A label the flow does not print; a version of its label never approved.
    elsewhere = offline_print(
        hall, [mine["first"] + 1], label_id=hall["label"].replace("lbl_", "lbl_0")
    )
    assert _upload(agent, [elsewhere])[0]["reason"] == "label_not_in_flow"
    draft = offline_print(hall, [mine["first"] + 1], label_version=1)
    assert _upload(agent, [draft])[0]["reason"] == "label_version_not_approved"

    # Each refusal is audited on the deployment it names.
    def refused(deployment_id: str) -> set[str]:
        search = {"target": deployment_id, "operation": "postRunnerOfflinePrints", "limit": 100}
        trail = admin.get("/audit-log", params=search).json()["items"]
        return {e["details"]["print_id"] for e in trail if e["outcome"] == "refused"}

    assert {stolen.id, unreserved.id, elsewhere.id, draft.id} <= refused(hall["deployment"]["id"])
    assert other_flow.id in refused(deployment_c["id"])

    # Strictly checked: strings are not numbers, unknown fields and 101 prints are refused.
    body = good.to_json()
    wrongs: list[dict[str, Any]] = [
        {"prints": [{**body, "label_version": "2"}]},
        {"prints": [{**body, "surprise": 1}]},
        {"prints": [{**body, "id": "opr_1"}]},
        {"prints": [{**body, "id": "opr_" + "Z" * 26}]},  # beyond 128 bits: no ULID
        {"prints": [body, body]},
        {"prints": [{**body, "id": new_print_id()} for _ in range(101)]},
        {"prints": []},
    ]
    for wrong in wrongs:
        problem(agent.post("/offline-prints", json=wrong), 422, "request.invalid")


def test_a_print_of_more_records_than_a_transaction_holds_is_archived_once(
    admin: Api, hall: Any
) -> None:
    """Its entries are written before its job (by ids derived from the print's, so a retry
    writes the same ones again): all of them, once."""
    _, agent = hall["a"]
    block = reserve(agent, hall["counter"], 120)
    taken = offline_print(hall, list(range(block["first"], block["first"] + 120)), outcome="sent")
    answers = [_upload(agent, [taken])[0] for _ in range(2)]
    assert [a["result"] for a in answers] == ["accepted", "already"]
    entries = admin.get(
        "/print-archive", params={"job_id": answers[0]["job_id"], "limit": 200}
    ).json()["items"]
    assert [e["variables"] for e in entries] == [r.variables for r in taken.records]


def test_the_runner_uploads_its_journal_over_the_agent_channel(
    admin: Api, hall: Any, dev_server: DevServer, tmp_path: Path
) -> None:
    """The Runner's uploader with its own mutual-TLS channel: archived prints leave the journal,
    a refused one is kept aside with its reason."""
    _, agent = hall["a"]
    block = reserve(agent, hall["counter"], 2)
    site = hall["site_a"]
    channel = AgentChannel(
        dev_server.agent_url,
        site.folder / "cert.pem",
        site.folder / "key.pem",
        [dev_server.ca_file],
    )
    journal = OfflinePrints(tmp_path)
    good = offline_print(hall, [block["first"], block["first"] + 1], outcome="sent")
    foreign = offline_print(hall, [block["first"] + 10_000], outcome="sent")
    for taken in (good, foreign):
        journal.record(taken)
    uploader = OfflineSync(
        channel, journal, tmp_path, Connectivity(threading.Event()), lambda _: None
    )
    try:
        assert uploader.sync() is True
    finally:
        channel.close()
    assert journal.unsynced() == []
    assert [(k["print"]["id"], k["reason"]) for k in uploader.refused()] == [
        (foreign.id, "counter_value_not_reserved")
    ]
    job_id = "job_" + good.id.removeprefix("opr_")
    entries = admin.get("/print-archive", params={"job_id": job_id}).json()["items"]
    assert [e["serials"][hall["counter"]] for e in entries] == [
        r.serials[hall["counter"]] for r in good.records
    ]


def test_a_print_of_a_deployment_rolled_back_meanwhile_is_archived_and_flagged(
    admin: Api, hall: Any
) -> None:
    _, agent = hall["a"]
    block = reserve(agent, hall["counter"], 1)
    taken = offline_print(hall, [block["first"]], outcome="sent")
    rolled = admin.post(f"/deployments/{hall['deployment']['id']}/rollback", json={})
    assert rolled.status_code == 200, rolled.text
    (answer,) = _upload(agent, [taken])
    assert (answer["result"], answer["flag"]) == ("accepted", "deployment_not_approved")
    (entry,) = admin.get("/print-archive", params={"job_id": answer["job_id"]}).json()["items"]
    assert entry["flag"] == "deployment_not_approved" and entry["printed_offline"] is True
    assert admin.get(f"/jobs/{answer['job_id']}").json()["flag"] == "deployment_not_approved"
    assert _upload(agent, [taken])[0] == {**answer, "result": "already"}
