"""Runners over the API and the agent channel: this test plays the Runner with a real key, CSR
and client certificate over mutual TLS (the Runner agent process has its own e2e tests)."""

from __future__ import annotations

import base64
import io
import json
import threading
import time
import zipfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.x509.oid import NameOID

from support.client import Api, before_expiry, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer


@pytest.fixture(scope="module")
def operator(admin: Api) -> Api:
    return admin.user_session(["operator"])[1]


def _group(admin: Api) -> dict[str, Any]:
    response = admin.post("/runner-groups", json={"name": unique("Halle"), "description": "Line 1"})
    assert response.status_code == 201, response.text
    return response.json()


def _token(admin: Api, group_id: str, **body: Any) -> dict[str, Any]:
    response = admin.post(f"/runner-groups/{group_id}/enrollment-tokens", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _admitted(admin: Api, dev_server: DevServer, tmp_path: Path) -> tuple[FakeSite, httpx.Client]:
    group = _group(admin)
    site = FakeSite(tmp_path, unique("site"))
    assert site.enroll(admin, _token(admin, group["id"])["token"]).status_code == 201
    agent = site.agent(dev_server)
    assert agent.post("/heartbeat", json={"hostname": "site-pc"}).status_code == 200
    return site, agent


def test_enrollment_token_is_one_time(admin: Api, tmp_path: Path) -> None:
    group = _group(admin)
    issued = _token(admin, group["id"])
    assert issued["token"].startswith("etkr_") and issued["needs_approval"] is False
    site = FakeSite(tmp_path, "once")
    response = site.enroll(admin, issued["token"])
    assert response.status_code == 201, response.text
    enrollment = response.json()
    assert enrollment["status"] == "approved" and enrollment["runner_id"].startswith("run_")
    certificate = x509.load_pem_x509_certificate(enrollment["certificate_pem"].encode())
    assert (
        certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
        == enrollment["runner_id"]
    )
    assert certificate.public_key().public_numbers() == site.key.public_key().public_numbers()
    ca = x509.load_pem_x509_certificate(enrollment["ca_pem"].encode())
    certificate.verify_directly_issued_by(ca)

    before = admin.get("/runners", params={"limit": 200}).json()["items"]
    problem(
        FakeSite(tmp_path, "twice").enroll(admin, issued["token"]), 401, "enrollment.token_used"
    )
    problem(
        FakeSite(tmp_path, "unknown").enroll(admin, "etkr_" + "x" * 43),
        401,
        "enrollment.token_invalid",
    )
    problem(
        FakeSite(tmp_path, "user").enroll(admin, admin.token or ""), 401, "enrollment.token_invalid"
    )
    after = admin.get("/runners", params={"limit": 200}).json()["items"]
    assert len(after) == len(before)  # refused enrollments created nothing


def test_expired_token_and_bad_csr_create_nothing(admin: Api, tmp_path: Path) -> None:
    group = _group(admin)

    def issue_and_refuse(expires_at: datetime) -> tuple[dict[str, Any], httpx.Response]:
        issued = _token(admin, group["id"], expires_at=expires_at.isoformat())
        bad = admin.post(
            "/runner-enrollments",
            token=issued["token"],
            json={
                "csr_pem": "-----BEGIN CERTIFICATE REQUEST-----\n"
                + "A" * 120
                + "\n-----END CERTIFICATE REQUEST-----\n"
            },
        )
        return issued, bad

    # The CSR is checked after the token: only a request before expiry is refused for it.
    (issued, bad), soon = before_expiry(issue_and_refuse, lead=1)
    body = problem(bad, 422, "request.invalid")
    assert body["params"]["fields"][0]["field"] == "body.csr_pem"
    time.sleep(max(0.0, (soon - datetime.now(UTC)).total_seconds()) + 0.2)
    problem(
        FakeSite(tmp_path, "late").enroll(admin, issued["token"]), 401, "enrollment.token_expired"
    )
    problem(
        admin.post(
            f"/runner-groups/{group['id']}/enrollment-tokens",
            json={"expires_at": (datetime.now(UTC) + timedelta(days=40)).isoformat()},
        ),
        422,
        "request.invalid",
    )
    problem(
        admin.post("/runner-groups/rgp_nope/enrollment-tokens", json={}),
        404,
        "runner_group.not_found",
    )


def test_enrollment_that_needs_approval(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    group = _group(admin)
    site = FakeSite(tmp_path, "approve-me")
    response = site.enroll(admin, _token(admin, group["id"], needs_approval=True)["token"])
    assert response.status_code == 201
    enrollment = response.json()
    assert enrollment["status"] == "pending" and enrollment["certificate_pem"] is None
    runner = operator.get(f"/runners/{enrollment['runner_id']}").json()
    assert runner["status"] == "pending"

    # The Runner polls with its secret; a wrong secret learns nothing.
    polled = admin.get(
        f"/runner-enrollments/{enrollment['id']}",
        token="",
        headers={"X-Enrollment-Secret": enrollment["secret"]},
    )
    assert polled.status_code == 200 and polled.json()["status"] == "pending"
    problem(
        admin.get(
            f"/runner-enrollments/{enrollment['id']}",
            token="",
            headers={"X-Enrollment-Secret": "etkn_wrong"},
        ),
        401,
        "enrollment.secret_invalid",
    )
    problem(
        admin.get(f"/runner-enrollments/{enrollment['id']}", token=""), 401, "auth.unauthenticated"
    )

    pending = operator.get(
        "/runner-enrollments", params={"status": "pending", "limit": 200}
    ).json()["items"]
    assert enrollment["id"] in {e["id"] for e in pending}
    problem(
        operator.post(f"/runner-enrollments/{enrollment['id']}/approval"), 403, "auth.forbidden"
    )
    approved = admin.post(f"/runner-enrollments/{enrollment['id']}/approval")
    assert approved.status_code == 200 and approved.json()["status"] == "approved"
    polled = admin.get(
        f"/runner-enrollments/{enrollment['id']}",
        token="",
        headers={"X-Enrollment-Secret": enrollment["secret"]},
    ).json()
    assert polled["certificate_pem"].startswith("-----BEGIN CERTIFICATE-----")
    agent = site.agent(dev_server, polled["certificate_pem"])
    assert agent.post("/heartbeat", json={}).status_code == 200
    assert operator.get(f"/runners/{enrollment['runner_id']}").json()["status"] == "online"


def test_agent_channel_refuses_tokens_and_removed_runners(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, agent = _admitted(admin, dev_server, tmp_path)
    plain = httpx.post(
        f"{dev_server.url}/api/v1/runner-agent/heartbeat",
        json={},
        headers={"Authorization": f"Bearer {admin.token}"},
    )
    problem(plain, 401, "runner.certificate_required")
    # A certificate from another CA never gets past the TLS handshake.
    stranger = FakeSite(tmp_path, "stranger")
    key = stranger.key
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, site.enrollment["runner_id"])])
    now = datetime.now(UTC)
    forged = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now)
        .not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    with pytest.raises(httpx.TransportError):
        stranger.agent(dev_server, forged.public_bytes(serialization.Encoding.PEM).decode()).post(
            "/heartbeat", json={}
        )

    assert admin.delete(f"/runners/{site.enrollment['runner_id']}").status_code == 204
    problem(agent.post("/heartbeat", json={}), 401, "runner.removed")
    problem(admin.get(f"/runners/{site.enrollment['runner_id']}"), 404, "runner.not_found")


def test_a_runner_removed_while_it_polls_is_refused_and_stays_removed(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """Removal during a claim's long poll (its queue goes away under it) or between a request's
    certificate check and its write: the answer is `runner.removed`, never a 500, and no write
    of that request brings the Runner back."""
    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id = site.enrollment["runner_id"]
    answers: list[httpx.Response] = []
    polling = threading.Thread(
        target=lambda: answers.append(agent.post("/jobs/claim", json={"wait_seconds": 20}))
    )
    polling.start()
    time.sleep(0.3)  # the claim is waiting on the Runner's queue
    assert admin.delete(f"/runners/{runner_id}").status_code == 204
    polling.join(60)  # at most its 20 s wait, on a loaded machine
    problem(answers[0], 401, "runner.removed")
    for _ in range(3):  # whatever the agent sends now, the Runner stays gone
        problem(agent.post("/heartbeat", json={"hostname": "again"}), 401, "runner.removed")
        problem(agent.post("/jobs/claim", json={"wait_seconds": 0}), 401, "runner.removed")
    problem(admin.get(f"/runners/{runner_id}"), 404, "runner.not_found")
    listed = admin.get("/runners", params={"limit": 200}).json()["items"]
    assert runner_id not in {runner["id"] for runner in listed}


def test_context_parameters_merge_into_the_runner_configuration(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id, group_id = site.enrollment["runner_id"], site.enrollment["group_id"]
    assert (
        operator.request(
            "PUT", f"/runner-groups/{group_id}/context/site", json={"value": "Werk Nord"}
        ).status_code
        == 200
    )
    assert (
        operator.request(
            "PUT", f"/runner-groups/{group_id}/context/darkness", json={"value": 20}
        ).status_code
        == 200
    )
    put = operator.request("PUT", f"/runners/{runner_id}/context/darkness", json={"value": 25})
    assert put.json()["value"] == 25 and put.json()["name"] == "darkness"
    assert agent.get("/config").json()["context"] == {"site": "Werk Nord", "darkness": 25}
    names = [p["name"] for p in operator.get(f"/runner-groups/{group_id}/context").json()["items"]]
    assert names == ["darkness", "site"]
    assert operator.delete(f"/runners/{runner_id}/context/darkness").status_code == 204
    assert agent.get("/config").json()["context"] == {"site": "Werk Nord", "darkness": 20}
    problem(operator.delete(f"/runners/{runner_id}/context/darkness"), 404, "context.not_found")
    problem(
        operator.request("PUT", f"/runners/{runner_id}/context/bad name!", json={"value": 1}),
        422,
        "request.invalid",
    )
    _, designer = admin.user_session(["designer"])
    assert designer.get(f"/runners/{runner_id}/context").status_code == 200
    problem(
        designer.request("PUT", f"/runners/{runner_id}/context/x", json={"value": 1}),
        403,
        "auth.forbidden",
    )


def test_discovery_findings_are_adopted_as_printers(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id = site.enrollment["runner_id"]
    for targets in (["10.0.0.0/16"], ["10.0.0.0/24", "10.0.1.1"], ["bad host!"]):
        problem(
            operator.post(f"/runners/{runner_id}/discovery", json={"targets": targets}),
            422,
            "request.invalid",
        )
    for targets in (["8.8.8.8"], ["10.0.0.0/24:22"]):
        problem(
            operator.post(f"/runners/{runner_id}/discovery", json={"targets": targets}),
            422,
            "printer.address_refused",
        )
    job = operator.post(
        f"/runners/{runner_id}/discovery", json={"targets": ["127.0.0.1:9100", "192.168.5.0/28"]}
    )
    assert job.status_code == 202 and job.json()["kind"] == "discovery"
    claimed = agent.post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"]
    assert [c["job_id"] for c in claimed] == [job.json()["id"]]
    assert claimed[0]["payload"] == {"targets": ["127.0.0.1:9100", "192.168.5.0/28"]}
    reported = agent.post(
        f"/jobs/{claimed[0]['job_id']}/report",
        json={
            "receipt": claimed[0]["receipt"],
            "status": "succeeded",
            "final": True,
            "result": {
                "findings": [
                    {
                        "address": "127.0.0.1:9100",
                        "model": "ZT411",
                        "dpi": 300,
                        "firmware": "V84.20",
                        "status": "ready",
                    }
                ]
            },
        },
    ).json()
    finding = reported["result"]["findings"][0]
    assert finding["id"].startswith("fnd_") and finding["model"] == "ZT411"
    # The Runner's findings have their own list: where a finding_id comes from.
    listed = operator.get(f"/runners/{runner_id}/discovery/findings").json()
    assert [(f["id"], f["job_id"], f["address"], f["dpi"]) for f in listed["items"]] == [
        (finding["id"], job.json()["id"], "127.0.0.1:9100", 300)
    ]
    assert listed["items"][0]["expires_at"] > listed["items"][0]["found_at"]
    problem(operator.get("/runners/run_nope/discovery/findings"), 404, "runner.not_found")
    problem(admin.as_token(admin.service_token("designer")["token"]).get(
        f"/runners/{runner_id}/discovery/findings"), 403, "auth.forbidden")  # fmt: skip
    name = unique("Zebra")
    printer = operator.post("/printers", json={"finding_id": finding["id"], "name": name})
    assert printer.status_code == 201, printer.text
    assert printer.json() | {"id": "x", "created_at": "x"} == {
        "id": "x",
        "name": name,
        "runner_id": runner_id,
        "uri": "tcp://127.0.0.1:9100",
        "language": "zpl",
        "dpi": 300,
        "model": "ZT411",
        "status": None,
        "status_at": None,
        "created_at": "x",
    }
    problem(
        operator.post("/printers", json={"finding_id": finding["id"], "name": name.upper()}),
        409,
        "printer.name_taken",
    )
    problem(
        operator.post("/printers", json={"finding_id": "fnd_nope", "name": "x"}),
        404,
        "finding.not_found",
    )
    problem(
        operator.post(
            "/printers",
            json={"name": "y", "finding_id": finding["id"], "uri": "tcp://1.2.3.4:9100"},
        ),
        422,
        "request.invalid",
    )
    assert [p["name"] for p in agent.get("/config").json()["printers"]] == [name]
    # The heartbeat carries the printer's state into listPrinters.
    agent.post(
        "/heartbeat",
        json={"printers": [{"printer_id": printer.json()["id"], "status": "paper_out"}]},
    )
    listed = operator.get("/printers", params={"runner_id": runner_id}).json()["items"]
    assert [(p["name"], p["status"]) for p in listed] == [(name, "paper_out")]
    assert operator.delete(f"/printers/{printer.json()['id']}").status_code == 204
    assert agent.get("/config").json()["printers"] == []


def test_group_discovery_fans_out_to_online_runners(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, _agent = _admitted(admin, dev_server, tmp_path)
    group_id = site.enrollment["group_id"]
    answer = operator.post(
        "/printers/discover", json={"group_id": group_id, "targets": ["127.0.0.1"]}
    )
    assert answer.status_code == 202
    assert [j["runner_id"] for j in answer.json()["jobs"]] == [site.enrollment["runner_id"]]
    empty = _group(admin)
    problem(
        operator.post(
            "/printers/discover", json={"group_id": empty["id"], "targets": ["127.0.0.1"]}
        ),
        409,
        "runner_group.no_online_runner",
    )


def test_raw_jobs_flow_through_the_queue_and_report_once(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id = site.enrollment["runner_id"]
    printer = operator.post(
        "/printers",
        json={
            "name": unique("declared"),
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9100",
            "language": "zpl",
            "dpi": 203,
        },
    ).json()
    data = b"^XA^FO10,10^GB100,100,4^FS^XZ"
    job = operator.post(
        f"/runners/{runner_id}/jobs",
        json={
            "printer_id": printer["id"],
            "data_base64": base64.b64encode(data).decode(),
            "expected_labels": 1,
        },
    ).json()
    assert job["status"] == "queued" and job["printer_id"] == printer["id"]
    claimed = agent.post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"][0]
    assert base64.b64decode(claimed["data_base64"]) == data
    assert claimed["payload"]["printer"]["uri"] == "tcp://127.0.0.1:9100"
    assert claimed["payload"]["expected_labels"] == 1
    assert operator.get(f"/jobs/{job['id']}").json()["status"] == "running"
    assert operator.get(f"/jobs/{job['id']}").json()["waiting"] is None
    # Its printer runs out of paper (the heartbeat says so): the job says why it waits.
    agent.post(
        "/heartbeat", json={"printers": [{"printer_id": printer["id"], "status": "paper_out"}]}
    )
    running = operator.get(f"/jobs/{job['id']}").json()
    assert (running["status"], running["waiting"]) == ("running", "printer held (paper_out)")
    agent.post("/heartbeat", json={"printers": [{"printer_id": printer["id"], "status": "ready"}]})
    assert operator.get(f"/jobs/{job['id']}").json()["waiting"] is None

    held = agent.post(
        f"/jobs/{job['id']}/report",
        json={
            "receipt": claimed["receipt"],
            "status": "held",
            "reason": "paper_out",
            "messages": [{"level": "warning", "text": "Printer out of paper"}],
        },
    ).json()
    assert held["status"] == "held" and held["outcome_reason"] == "paper_out"
    agent.post(f"/jobs/{job['id']}/report", json={"receipt": claimed["receipt"], "status": "sent"})
    problem(operator.post(f"/jobs/{job['id']}/cancel"), 409, "job.not_cancellable")
    done = agent.post(
        f"/jobs/{job['id']}/report",
        json={"receipt": claimed["receipt"], "status": "confirmed", "final": True},
    ).json()
    assert done["status"] == "confirmed" and done["finished_at"]
    # The Runner repeats a report it was unsure had arrived: harmless.
    again = agent.post(
        f"/jobs/{job['id']}/report",
        json={"receipt": claimed["receipt"], "status": "confirmed", "final": True},
    )
    assert again.status_code == 200 and again.json()["status"] == "confirmed"
    problem(
        agent.post(f"/jobs/{job['id']}/report", json={"status": "failed", "final": True}),
        409,
        "job.finished",
    )
    texts = [m["text"] for m in operator.get(f"/jobs/{job['id']}").json()["messages"]]
    assert texts[:2] == ["Queued for the Runner.", "Claimed by the Runner."]
    assert "Printer out of paper" in texts and "Held: paper_out." in texts
    # Nothing is left in the queue: a later claim gets no job again.
    assert agent.post("/jobs/claim", json={"wait_seconds": 1}).json()["jobs"] == []
    listed = operator.get(f"/runners/{runner_id}/jobs").json()["items"]
    assert [j["id"] for j in listed] == [job["id"]]


def test_job_bytes_travel_in_the_message_or_through_s3(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """Up to MESSAGE_DATA_BYTES the queue message carries the bytes; above, S3 does. The
    Runner gets them the same way either way."""
    from etikett.store.runner_queues import MESSAGE_DATA_BYTES

    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id = site.enrollment["runner_id"]
    printer = operator.post(
        "/printers",
        json={
            "name": unique("sizes"),
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9100",
            "language": "zpl",
            "dpi": 203,
        },
    ).json()
    for size in (MESSAGE_DATA_BYTES, MESSAGE_DATA_BYTES + 1):
        # One ZPL format whose field data is every byte value, to the exact size.
        filler = bytes(range(256)) * (size // 256)
        data = b"^XA^FD" + filler[: size - 9] + b"^" * max(0, size - 9 - len(filler)) + b"^XZ"
        assert len(data) == size
        job = operator.post(
            f"/runners/{runner_id}/jobs",
            json={"printer_id": printer["id"], "data_base64": base64.b64encode(data).decode()},
        ).json()
        claimed = agent.post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"][0]
        assert claimed["job_id"] == job["id"]
        assert base64.b64decode(claimed["data_base64"]) == data
        assert claimed["data_url"] is None and "data_key" not in claimed["payload"]
        assert claimed["payload"]["data_bytes"] == size
        agent.post(
            f"/jobs/{job['id']}/report",
            json={"receipt": claimed["receipt"], "status": "confirmed", "final": True},
        )


def test_large_job_bytes_come_from_the_storage_the_configuration_names(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """Over INLINE_DATA_BYTES the claim carries a presigned URL; its origin is the one the
    Runner's configuration names, the only place a Runner fetches job bytes from."""
    from urllib.parse import urlsplit

    from etikett.domain.agent.claims import INLINE_DATA_BYTES

    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id = site.enrollment["runner_id"]
    printer = operator.post(
        "/printers",
        json={
            "name": unique("large"),
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9100",
            "language": "zpl",
            "dpi": 203,
        },
    ).json()
    data = b"^XA^FD" + b"A" * INLINE_DATA_BYTES + b"^FS^XZ"
    job = operator.post(
        f"/runners/{runner_id}/jobs",
        json={"printer_id": printer["id"], "data_base64": base64.b64encode(data).decode()},
    ).json()
    claimed = agent.post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"][0]
    assert claimed["job_id"] == job["id"] and claimed["data_base64"] is None
    url = urlsplit(claimed["data_url"])
    origin = agent.get("/config").json()["data_origin"]
    assert origin == f"{url.scheme}://{url.netloc}"
    assert httpx.get(claimed["data_url"], timeout=30).content == data
    agent.post(
        f"/jobs/{job['id']}/report",
        json={"receipt": claimed["receipt"], "status": "failed", "final": True},
    )


def test_cancelled_jobs_never_reach_the_runner(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id = site.enrollment["runner_id"]
    job = operator.post(f"/runners/{runner_id}/discovery", json={"targets": ["127.0.0.1"]}).json()
    cancelled = operator.post(f"/jobs/{job['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert agent.post("/jobs/claim", json={"wait_seconds": 1}).json()["jobs"] == []
    problem(operator.post("/jobs/job_nope/cancel"), 404, "job.not_found")


def test_jobs_for_an_offline_runner_wait(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    group = _group(admin)
    site = FakeSite(tmp_path, "offline")
    site.enroll(admin, _token(admin, group["id"])["token"])
    runner_id = site.enrollment["runner_id"]
    assert operator.get(f"/runners/{runner_id}").json()["status"] == "offline"
    job = operator.post(f"/runners/{runner_id}/discovery", json={"targets": ["127.0.0.1"]}).json()
    assert job["status"] == "held" and job["outcome_reason"] == "runner_offline"
    claimed = site.agent(dev_server).post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"]
    assert [c["job_id"] for c in claimed] == [job["id"]]
    assert operator.get(f"/jobs/{job['id']}").json()["status"] == "running"


def test_a_restarted_runner_gets_back_what_its_dead_long_poll_claimed(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """A Runner killed during its long poll: the claim answered nobody, and the job would stay
    invisible for the queue's visibility timeout. The next process releases it at start."""
    site, agent = _admitted(admin, dev_server, tmp_path)
    operator = admin.user_session(["operator"])[1]
    runner_id = site.enrollment["runner_id"]
    job = operator.post(f"/runners/{runner_id}/discovery", json={"targets": ["127.0.0.1"]})
    lost = agent.post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"]
    assert [c["job_id"] for c in lost] == [job.json()["id"]]  # the answer nobody read
    assert agent.post("/jobs/claim", json={"wait_seconds": 1}).json()["jobs"] == []
    released = agent.post("/jobs/release")
    assert released.status_code == 200, released.text
    assert released.json() == {"job_ids": [job.json()["id"]]}
    again = agent.post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"]
    assert [(c["job_id"], c["delivery"]) for c in again] == [(job.json()["id"], 2)]
    finished = agent.post(
        f"/jobs/{again[0]['job_id']}/report",
        json={"receipt": again[0]["receipt"], "status": "succeeded", "final": True},
    )
    assert finished.status_code == 200, finished.text
    assert agent.post("/jobs/release").json() == {"job_ids": []}  # finished jobs stay put


def test_installer_contains_package_config_ca_and_a_fresh_token(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    group = _group(admin)
    response = admin.post(f"/runner-groups/{group['id']}/installer", json={"needs_approval": True})
    assert response.status_code == 201, response.text
    installer = response.json()
    archive = zipfile.ZipFile(io.BytesIO(httpx.get(installer["download_url"]).content))
    names = set(archive.namelist())
    assert {
        "etikett-runner/install.sh",
        "etikett-runner/install.ps1",
        "etikett-runner/config.json",
        "etikett-runner/ca.pem",
        "etikett-runner/enrollment-token",
        "etikett-runner/runner/pyproject.toml",
    } <= names
    assert not any("__pycache__" in n or "/tests/" in n for n in names)
    config = json.loads(archive.read("etikett-runner/config.json"))
    assert config["server_url"] == dev_server.url and config["agent_url"] == dev_server.agent_url
    assert config["group_id"] == group["id"]
    assert archive.read("etikett-runner/ca.pem").decode() == dev_server.ca_file.read_text()
    token = archive.read("etikett-runner/enrollment-token").decode().strip()
    assert archive.getinfo("etikett-runner/enrollment-token").external_attr >> 16 == 0o600
    scripts = Path(__file__).resolve().parents[3] / "runner" / "installer"
    for name in ("install.sh", "install.ps1"):  # the scripts as they are, not twice
        assert archive.read(f"etikett-runner/{name}") == (scripts / name).read_bytes()
        assert f"etikett-runner/runner/installer/{name}" not in names
    assert archive.getinfo("etikett-runner/install.sh").external_attr >> 16 == 0o755
    pending = FakeSite(tmp_path, "installed").enroll(admin, token)
    assert pending.status_code == 201 and pending.json()["status"] == "pending"


ENGINE_RUN = """
import importlib.util, json, pathlib, sys
sys.path[:0] = [sys.argv[1], sys.argv[3]]  # the installed packages, then their dependencies
import etikett_engine, etikett_runner
from etikett_engine.flows.engine import FlowProgram, RunEnv
from etikett_runner.flow_effects import SiteEffects

assert etikett_engine.__file__.startswith(sys.argv[1]), etikett_engine.__file__
assert etikett_runner.__file__.startswith(sys.argv[1]), etikett_runner.__file__
program = FlowProgram.compile({"nodes": [
    {"id": "in", "type": "trigger.folder", "path": "in", "wires": ["set"]},
    {"id": "set", "type": "logic.set", "values": {"n": "int(record.n) * 2"}, "wires": ["some"]},
    {"id": "some", "type": "logic.filter", "condition": "record.n > 2", "wires": ["pick"]},
    {"id": "pick", "type": "logic.switch", "cases": [{"when": "record.n > 4", "wires": ["p"]}],
     "otherwise": ["log"]},
    {"id": "p", "type": "action.print", "label": "lbl_01J9Z8Q4X6V2M3N5P7R9S1T3V5",
     "printer": "main", "variables": {"name": "string(record.n)"}, "wires": ["f"]},
    {"id": "f", "type": "action.file", "path": "'out.txt'", "content": "string(record.n)"},
    {"id": "log", "type": "action.log", "message": "'small ' + string(record.n)"},
]})
effects = SiteEffects(pathlib.Path(sys.argv[2]))
result = program.run([{"n": "1"}, {"n": "2"}, {"n": "3"}], "in", effects, env=RunEnv())
print(json.dumps({
    "outcome": result.outcome,
    "printed": [b.records for b in effects.batches],
    "log": [m["message"] for m in effects.messages],
    "service": importlib.util.find_spec("etikett") is not None,
}))
"""


def test_the_installer_ships_the_engine_the_runner_installs_and_runs(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """The installer ships the engine as its wheel (etikett-engine) beside the Runner's source;
    installed from the zip as install.sh installs them, the two run a flow with the Runner's own
    effects, and the service's package is nowhere to import."""
    import subprocess
    import sys
    import sysconfig

    group = _group(admin)
    installer = admin.post(f"/runner-groups/{group['id']}/installer", json={}).json()
    archive = zipfile.ZipFile(io.BytesIO(httpx.get(installer["download_url"]).content))
    names = archive.namelist()
    wheels = [n for n in names if n.startswith("etikett-runner/packages/")]
    assert len(wheels) == 1 and wheels[0].endswith("-py3-none-any.whl"), wheels
    assert not [n for n in names if "/etikett/" in n or "/etikett_engine/" in n]  # no copies
    archive.extractall(tmp_path)
    wheel = zipfile.ZipFile(tmp_path / wheels[0])
    inside = set(wheel.namelist())
    assert "etikett_engine/flows/engine.py" in inside and "etikett_engine/outgoing.py" in inside
    assert "etikett_engine/render/raster.py" in inside  # the renderer, for printing on site
    assert not [n for n in inside if n.startswith("etikett/")]
    metadata = next(n for n in inside if n.endswith(".dist-info/METADATA"))
    assert "Name: etikett-engine" in wheel.read(metadata).decode()
    assert "Provides-Extra: render" in wheel.read(metadata).decode()

    site = tmp_path / "site"
    folder = tmp_path / "etikett-runner"
    install = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    # install.sh's pip line, with the dependencies from this environment instead of an index
    install += ["--no-deps", "--no-index", "--no-build-isolation", "--target", str(site)]
    installed = subprocess.run(
        [*install, str(tmp_path / wheels[0]), str(folder / "runner")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    (tmp_path / "data").mkdir()
    dependencies = sysconfig.get_paths()["purelib"]
    ran = subprocess.run(
        # -S: no site-packages of this environment, so no editable etikett or etikett_engine
        [sys.executable, "-S", "-c", ENGINE_RUN, str(site), str(tmp_path / "data"), dependencies],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stderr
    answer = json.loads(ran.stdout)
    assert answer["outcome"] == "succeeded"
    assert answer["printed"] == [[{"name": "6"}]] and answer["log"] == ["small 4"]
    assert (tmp_path / "data" / "out.txt").read_text() == "6"
    assert answer["service"] is False


def test_runner_roles(admin: Api, dev_server: DevServer, tmp_path: Path) -> None:
    site, _ = _admitted(admin, dev_server, tmp_path)
    _, designer = admin.user_session(["designer"])
    assert designer.get("/runners").status_code == 200
    assert designer.get("/runner-groups").status_code == 200
    problem(designer.post("/runner-groups", json={"name": "x"}), 403, "auth.forbidden")
    problem(
        designer.post(
            f"/runners/{site.enrollment['runner_id']}/discovery", json={"targets": ["127.0.0.1"]}
        ),
        403,
        "auth.forbidden",
    )
    problem(designer.delete(f"/runners/{site.enrollment['runner_id']}"), 403, "auth.forbidden")
    assert designer.get(f"/runner-groups/{site.enrollment['group_id']}/deployments").json() == {
        "items": [],
        "next_cursor": None,
    }


def test_runners_of_a_group_list_only_runners(
    admin: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, _ = _admitted(admin, dev_server, tmp_path)
    group_id = site.enrollment["group_id"]
    _token(admin, group_id)  # tokens and enrollments of the group must not show up as Runners
    listed = admin.get("/runners", params={"group_id": group_id})
    assert listed.status_code == 200, listed.text
    assert [r["id"] for r in listed.json()["items"]] == [site.enrollment["runner_id"]]


def test_a_removed_runners_open_jobs_end(admin: Api, dev_server: DevServer, tmp_path: Path) -> None:
    site, _ = _admitted(admin, dev_server, tmp_path)
    runner_id = site.enrollment["runner_id"]
    job = admin.post(f"/runners/{runner_id}/discovery", json={"targets": ["127.0.0.1"]}).json()
    assert admin.delete(f"/runners/{runner_id}").status_code == 204
    ended = admin.get(f"/jobs/{job['id']}").json()
    assert (ended["status"], ended["outcome_reason"]) == ("failed", "runner_removed")


def test_printers_stay_on_the_sites_network_and_its_printer_ports(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """An operator cannot point a Runner at the internet or at a site's other services; an
    admin may allow the group more printer ports, and that is audited and reaches the Runner."""
    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id, group_id = site.enrollment["runner_id"], site.enrollment["group_id"]

    def declare(uri: str) -> httpx.Response:
        body = {"name": unique("p"), "runner_id": runner_id, "uri": uri, "language": "zpl"}
        return operator.post("/printers", json={**body, "dpi": 203})

    for uri in ("tcp://93.184.216.34:9100", "tcp://10.0.0.5:22", "tcp://10.0.0.5:9101"):
        refused = problem(declare(uri), 422, "printer.address_refused")
        assert refused["params"]["uri"] == uri and refused["params"]["reason"]
    problem(
        operator.request("PUT", f"/runner-groups/{group_id}/printer-ports", json={"ports": [9101]}),
        403,
        "auth.forbidden",
    )
    problem(
        admin.request("PUT", f"/runner-groups/{group_id}/printer-ports", json={"ports": [80]}),
        422,
        "request.invalid",
    )
    allowed = admin.request(
        "PUT", f"/runner-groups/{group_id}/printer-ports", json={"ports": [9101, 9101]}
    )
    assert allowed.status_code == 200 and allowed.json()["printer_ports"] == [9101]
    assert declare("tcp://10.0.0.5:9101").status_code == 201
    problem(declare("tcp://93.184.216.34:9101"), 422, "printer.address_refused")
    assert agent.get("/config").json()["printer_ports"] == [9101]
    entries = admin.get(
        "/audit-log", params={"operation": "putRunnerGroupPrinterPorts", "target": group_id}
    ).json()["items"]
    assert [(e["outcome"], e["details"]) for e in entries if e["outcome"] == "success"] == [
        ("success", {"before": [], "after": [9101]})
    ]


def test_raw_jobs_carry_printer_language_only(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, agent = _admitted(admin, dev_server, tmp_path)
    runner_id = site.enrollment["runner_id"]
    body = {"name": unique("raw"), "runner_id": runner_id, "uri": "tcp://10.0.0.9:9100"}
    printer = operator.post("/printers", json={**body, "language": "zpl", "dpi": 203}).json()
    for data in (
        b"GET /admin HTTP/1.1\r\nHost: 10.0.0.9\r\n\r\n",
        b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03",
        b"^XA^XZ\r\nFLUSHALL\r\n",
    ):
        refused = problem(
            operator.post(
                f"/runners/{runner_id}/jobs",
                json={"printer_id": printer["id"], "data_base64": base64.b64encode(data).decode()},
            ),
            422,
            "job.not_printer_data",
        )
        assert refused["params"]["language"] == "zpl"
    assert agent.post("/jobs/claim", json={"wait_seconds": 1}).json()["jobs"] == []


def test_discovery_is_rate_limited_per_runner(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    site, _agent = _admitted(admin, dev_server, tmp_path)
    runner_id, group_id = site.enrollment["runner_id"], site.enrollment["group_id"]
    for _ in range(3):  # a burst of three, then one every 20 s
        burst = operator.post(f"/runners/{runner_id}/discovery", json={"targets": ["10.0.0.0/28"]})
        assert burst.status_code == 202, burst.text
    again = operator.post(f"/runners/{runner_id}/discovery", json={"targets": ["10.0.0.0/28"]})
    body = problem(again, 429, "runner.discovery_throttled")
    wait = int(again.headers["retry-after"])
    assert 1 <= wait <= 20 and body["params"]["retry_after"] == wait
    grouped = operator.post(
        "/printers/discover", json={"group_id": group_id, "targets": ["10.0.0.1"]}
    )
    problem(grouped, 429, "runner.discovery_throttled")
