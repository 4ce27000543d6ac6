"""Printing through the API: references, validation, counters, idempotency, the archive and
outcomes. The Runner is played by the test over mutual TLS (tests/support/runner_site.py); the
Runner process and printer simulator run in tests/e2e."""

from __future__ import annotations

import base64
import io
import threading
from pathlib import Path
from typing import Any

import boto3
import pytest
from PIL import Image, ImageChops
from unit.render.decoders import decode_zpl

from support.client import Api, problem, unique
from support.runner_site import FakeSite
from support.server import DevServer

DOCUMENT_OPS = [
    {
        "op": "add",
        "path": "/variables/-",
        "value": {"name": "name", "type": "string", "required": True, "sample": "Muster"},
    },
    {
        "op": "add",
        "path": "/variables/-",
        "value": {"name": "qty", "type": "integer", "default": 1},
    },
    {
        "op": "add",
        "path": "/objects/-",
        "value": {
            "id": "title",
            "type": "text",
            "x_mm": 2,
            "y_mm": 2,
            "size_pt": 9,
            "expression": 'name + " x" + string(qty)',
        },
    },
]


class Site:
    """A group with an online Runner (played by the test) and a 203-dpi ZPL printer."""

    def __init__(self, admin: Api, server: DevServer, tmp: Path) -> None:
        group = admin.post("/runner-groups", json={"name": unique("print")}).json()
        token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
        self.runner = FakeSite(tmp, unique("runner"))
        assert self.runner.enroll(admin, token["token"]).status_code == 201
        self.agent = self.runner.agent(server)
        self.agent.post("/heartbeat", json={})
        self.runner_id = self.runner.enrollment["runner_id"]
        self.printer = admin.post(
            "/printers",
            json={
                "name": unique("zebra"),
                "runner_id": self.runner_id,
                "uri": "tcp://127.0.0.1:9100",
                "language": "zpl",
                "dpi": 203,
            },
        ).json()

    def claim(self) -> dict[str, Any]:
        jobs = self.agent.post("/jobs/claim", json={"wait_seconds": 5}).json()["jobs"]
        assert len(jobs) == 1, jobs
        return jobs[0]

    def report(self, job: dict[str, Any], status: str, **extra: Any) -> dict[str, Any]:
        response = self.agent.post(
            f"/jobs/{job['job_id']}/report",
            json={"receipt": job["receipt"], "status": status, **extra},
        )
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
def site(admin: Api, dev_server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> Site:
    return Site(admin, dev_server, tmp_path_factory.mktemp("print-site"))


@pytest.fixture(scope="module")
def operator(admin: Api) -> Api:
    return admin.user_session(["operator"])[1]


def _released_label(
    admin: Api, extra_ops: list[dict[str, Any]] | None = None, counter: str | None = None
) -> dict[str, Any]:
    designer = admin.user_session(["designer"])[1]
    label = designer.post(
        "/labels/from-dimensions", json={"name": unique("print"), "width_mm": 50, "height_mm": 25}
    ).json()
    ops = list(DOCUMENT_OPS) + (extra_ops or [])
    if counter:
        ops.append(
            {
                "op": "add",
                "path": "/objects/-",
                "value": {
                    "id": "serial",
                    "type": "barcode",
                    "symbology": "code128",
                    "x_mm": 2,
                    "y_mm": 8,
                    "height_mm": 8,
                    "expression": f"counters.{counter}",
                },
            }
        )
    patched = designer.request("PATCH", f"/labels/{label['id']}/document", json={"operations": ops})
    assert patched.status_code == 200, patched.text
    approver = admin.user_session(["approver"])[1]
    assert (
        approver.post(
            f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"}
        ).status_code
        == 200
    )
    return label


def _counter(operator: Api, **body: Any) -> str:
    name = unique("serial").replace("-", "_")
    response = operator.post("/counters", json={"name": name, **body})
    assert response.status_code == 201, response.text
    return name


def _events_of(dev_server: DevServer, job_id: str) -> list[dict[str, Any]]:
    """The outbox items (events table) about a job, oldest first."""
    dynamodb = boto3.resource(
        "dynamodb",
        endpoint_url=dev_server.aws_endpoint(),
        region_name="eu-central-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
    )
    table = dynamodb.Table("etikett-local-EventsTable")
    items = [item for item in table.scan()["Items"] if item["subject_id"] == job_id]
    return sorted(items, key=lambda item: item["id"])


def _labels_of(data: bytes) -> list[Image.Image]:
    jobs = [part + b"^XZ\n" for part in data.split(b"^XZ\n") if part.strip()]
    return [decode_zpl(job).image() for job in jobs]


def test_print_by_released_reference_sends_the_preview_raster(
    admin: Api, operator: Api, site: Site
) -> None:
    counter = _counter(operator, start=1000, format="000000")
    label = _released_label(admin, counter=counter)
    preview = operator.post(
        f"/labels/{label['id']}/preview", json={"variables": {"name": "Grüße", "qty": 3}}
    )
    answer = operator.post(
        "/print",
        json={
            "label_id": label["id"],
            "printer": site.printer["name"],
            "copies": 2,
            "variables": {"name": "Grüße", "qty": 3},
        },
    )
    assert answer.status_code == 202, answer.text
    accepted = answer.json()
    assert accepted["status"] == "queued" and len(accepted["archive_entry_ids"]) == 1
    job = site.claim()
    assert job["job_id"] == accepted["job_id"] and job["kind"] == "print"
    assert job["payload"]["expected_labels"] == 2 and job["payload"]["label_version"] == 2
    printed = _labels_of(base64.b64decode(job["data_base64"]))
    assert len(printed) == 1
    assert b"^PQ2" in base64.b64decode(job["data_base64"])
    expected = Image.open(io.BytesIO(preview.content)).convert("1")
    assert ImageChops.difference(printed[0].convert("L"), expected.convert("L")).getbbox() is None
    entry = operator.get(f"/print-archive/{accepted['archive_entry_ids'][0]}").json()
    assert entry["serials"] == {counter: "001000"} and entry["outcome"] is None
    assert entry["variables"] == {"name": "Grüße", "qty": 3} and entry["copies"] == 2
    assert entry["label_version"] == 2 and entry["printer"] == site.printer["name"]
    site.report(job, "sent")
    assert operator.get(f"/print-archive/{entry['id']}").json()["outcome"] == "sent"
    site.report(job, "confirmed", final=True)
    entry = operator.get(f"/print-archive/{entry['id']}").json()
    assert entry["outcome"] == "confirmed" and entry["outcome_at"]
    assert operator.get(f"/counters/{counter}").json()["current"] == 1000


def test_version_references_and_unreleased_labels(admin: Api, operator: Api, site: Site) -> None:
    label = _released_label(admin)
    designer = admin.user_session(["designer"])[1]
    designer.request(
        "PATCH",
        f"/labels/{label['id']}/document",
        json={"operations": [{"op": "replace", "path": "/objects/0/size_pt", "value": 12}]},
    )
    printer = site.printer["name"]
    body = problem(
        operator.post(
            "/print",
            json={"label_id": f"{label['id']}@3", "printer": printer, "variables": {"name": "x"}},
        ),
        409,
        "print.label_not_released",
    )
    assert body["params"]["status"] == "draft"
    ok = operator.post(
        "/print",
        json={"label_id": f"{label['id']}@2", "printer": printer, "variables": {"name": "x"}},
    )
    assert ok.status_code == 202
    site.report(site.claim(), "confirmed", final=True)
    draft = designer.post(
        "/labels/from-dimensions", json={"name": "d", "width_mm": 20, "height_mm": 10}
    ).json()
    problem(
        operator.post("/print", json={"label_id": draft["id"], "printer": printer}),
        409,
        "print.label_not_released",
    )
    problem(
        operator.post("/print", json={"label_id": "lbl_bad", "printer": printer}),
        422,
        "request.invalid",
    )
    problem(
        operator.post(
            "/print", json={"label_id": label["id"], "printer": "nope", "variables": {"name": "x"}}
        ),
        404,
        "printer.not_found",
    )
    unknown = "lbl_" + "0" * 26
    body = problem(
        operator.post("/print", json={"label_id": unknown, "printer": printer}),
        404,
        "label.not_found",
    )
    assert body["params"]["label_id"] == unknown
    body = problem(
        operator.post("/print", json={"label_id": f"{label['id']}@99", "printer": printer}),
        404,
        "label.version_not_found",
    )
    assert body["params"]["version"] == 99
    # The label is checked before the printer.
    problem(
        operator.post("/print", json={"label_id": f"{unknown}@2", "printer": "nope"}),
        404,
        "label.version_not_found",
    )


def test_a_retired_version_does_not_print(admin: Api, operator: Api, site: Site) -> None:
    label = _released_label(admin)
    designer = admin.user_session(["designer"])[1]
    approver = admin.user_session(["approver"])[1]
    patched = designer.request(
        "PATCH",
        f"/labels/{label['id']}/document",
        json={"operations": [{"op": "replace", "path": "/objects/0/size_pt", "value": 12}]},
    )
    assert patched.json()["version"] == 3
    approved = approver.post(
        f"/labels/{label['id']}/status", json={"version": 3, "status": "approved"}
    )
    assert approved.status_code == 200, approved.text
    versions = {
        v["version"]: v["status"]
        for v in designer.get(f"/labels/{label['id']}/versions").json()["items"]
    }
    assert versions[2] == "retired" and versions[3] == "approved"
    printer = site.printer["name"]
    body = problem(
        operator.post(
            "/print",
            json={"label_id": f"{label['id']}@2", "printer": printer, "variables": {"name": "x"}},
        ),
        409,
        "print.label_not_released",
    )
    assert body["params"] == {"label_id": label["id"], "version": 2, "status": "retired"}
    released = operator.post(
        "/print", json={"label_id": label["id"], "printer": printer, "variables": {"name": "x"}}
    )
    assert released.status_code == 202, released.text
    job = site.claim()
    assert job["payload"]["label_version"] == 3
    site.report(job, "confirmed", final=True)


def test_the_archive_lists_one_labels_prints_newest_first(
    admin: Api, operator: Api, site: Site
) -> None:
    one, other = _released_label(admin), _released_label(admin)
    printer = site.printer["name"]

    def printed(label: dict[str, Any], **source: Any) -> list[str]:
        answer = operator.post(
            "/print", json={"label_id": label["id"], "printer": printer, **source}
        )
        assert answer.status_code == 202, answer.text
        site.report(site.claim(), "confirmed", final=True)
        return list(answer.json()["archive_entry_ids"])

    first = printed(one, data=[{"name": "a"}, {"name": "b"}])
    printed(other, variables={"name": "c"})
    last = printed(one, variables={"name": "d"})
    approver = admin.user_session(["approver"])[1]
    pages = [approver.get("/print-archive", params={"label_id": one["id"], "limit": 2}).json()]
    while pages[-1]["next_cursor"]:
        pages.append(
            approver.get(
                "/print-archive",
                params={"label_id": one["id"], "limit": 2, "cursor": pages[-1]["next_cursor"]},
            ).json()
        )
    entries = [entry for page in pages for entry in page["items"]]
    assert [e["id"] for e in entries] == last + sorted(first, reverse=True)
    assert {e["label_id"] for e in entries} == {one["id"]}
    assert {e["outcome"] for e in entries} == {"confirmed"}
    assert sorted(e["variables"]["name"] for e in entries) == ["a", "b", "d"]
    nobody = operator.get("/print-archive", params={"label_id": "lbl_" + "0" * 26}).json()
    assert nobody == {"items": [], "next_cursor": None}


def test_every_bad_record_is_named_and_nothing_is_taken(
    admin: Api, operator: Api, site: Site
) -> None:
    counter = _counter(operator)
    label = _released_label(admin, counter=counter)
    data = [{"name": "ok", "qty": 1}, {"qty": "many"}, {"name": "ok", "colour": "red"}]
    body = problem(
        operator.post(
            "/print", json={"label_id": label["id"], "printer": site.printer["name"], "data": data}
        ),
        422,
        "print.variables_invalid",
    )
    assert {(e["record"], e["variable"]) for e in body["params"]["errors"]} == {
        (1, "name"),
        (1, "qty"),
        (2, "colour"),
    }
    assert operator.get(f"/counters/{counter}").json()["current"] is None
    problem(
        operator.post(
            "/print", json={"label_id": label["id"], "printer": "x", "variables": {}, "data": [{}]}
        ),
        422,
        "request.invalid",
    )
    too_many = [{"name": "n"}] * 10_001
    problem(
        operator.post(
            "/print",
            json={"label_id": label["id"], "printer": site.printer["name"], "data": too_many},
        ),
        413,
        "print.too_many_records",
    )


def test_a_data_stream_renders_in_the_background_with_contiguous_serials(
    admin: Api, operator: Api, site: Site
) -> None:
    counter = _counter(operator, start=1, step=1)
    label = _released_label(admin, counter=counter)
    data = [{"name": f"item {i}", "qty": i} for i in range(40)]
    answer = operator.post(
        "/print", json={"label_id": label["id"], "printer": site.printer["name"], "data": data}
    )
    assert answer.status_code == 202, answer.text
    accepted = answer.json()
    assert accepted["status"] == "rendering" and len(accepted["archive_entry_ids"]) == 40
    job = site.claim()
    assert job["job_id"] == accepted["job_id"]
    assert len(_labels_of(base64.b64decode(job["data_base64"]))) == 40
    entries, cursor = [], None
    while True:
        page = operator.get(
            "/print-archive",
            params={
                "job_id": accepted["job_id"],
                "limit": 15,
                **({"cursor": cursor} if cursor else {}),
            },
        )
        entries += page.json()["items"]
        cursor = page.json()["next_cursor"]
        if not cursor:
            break
    assert [e["variables"]["qty"] for e in entries] == list(range(40))
    assert [e["serials"][counter] for e in entries] == list(range(1, 41))
    site.report(job, "confirmed", final=True)


def test_concurrent_prints_never_share_a_serial(admin: Api, operator: Api, site: Site) -> None:
    counter = _counter(operator, start=500)
    label = _released_label(admin, counter=counter)
    answers: list[dict[str, Any]] = []

    def one() -> None:
        response = operator.as_token(operator.token or "").post(
            "/print",
            json={
                "label_id": label["id"],
                "printer": site.printer["name"],
                "variables": {"name": "c"},
            },
        )
        assert response.status_code == 202, response.text
        answers.append(response.json())

    threads = [threading.Thread(target=one) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(answers) == 20
    serials = sorted(
        operator.get(f"/print-archive/{a['archive_entry_ids'][0]}").json()["serials"][counter]
        for a in answers
    )
    assert serials == list(range(500, 520))
    for _ in answers:
        site.report(site.claim(), "confirmed", final=True)


def test_idempotency_key_prints_once(admin: Api, operator: Api, site: Site) -> None:
    counter = _counter(operator)
    label = _released_label(admin, counter=counter)
    body = {
        "label_id": label["id"],
        "printer": site.printer["name"],
        "variables": {"name": "once"},
        "idempotency_key": unique("order-4711"),
    }
    first = operator.post("/print", json=body)
    again = operator.post("/print", json=body)
    assert first.status_code == again.status_code == 202
    assert again.json() == first.json()
    assert operator.get(f"/counters/{counter}").json()["issued"] == 1
    site.report(site.claim(), "confirmed", final=True)
    assert site.agent.post("/jobs/claim", json={"wait_seconds": 1}).json()["jobs"] == []
    # A replay after the labels came out answers the same job as it is now, printing nothing.
    later = operator.post("/print", json=body)
    assert later.status_code == 202
    assert later.json() == {**first.json(), "status": "confirmed"}
    assert operator.get(f"/counters/{counter}").json()["issued"] == 1
    assert site.agent.post("/jobs/claim", json={"wait_seconds": 1}).json()["jobs"] == []
    problem(operator.post("/print", json={**body, "copies": 5}), 409, "print.idempotency_conflict")


def test_counters_lifecycle(operator: Api, admin: Api, site: Site) -> None:
    name = _counter(operator, start=7, step=5, format='"SN" + pad(value, 4)')
    counter = operator.get(f"/counters/{name}").json()
    assert (counter["start"], counter["step"], counter["current"], counter["active"]) == (
        7,
        5,
        None,
        True,
    )
    assert name in {
        c["name"] for c in operator.get("/counters", params={"limit": 200}).json()["items"]
    }
    problem(operator.post("/counters", json={"name": name}), 409, "counter.exists")
    problem(
        operator.post("/counters", json={"name": "x", "format": "pad(value,"}),
        422,
        "request.invalid",
    )
    label = _released_label(admin, counter=name)
    answer = operator.post(
        "/print",
        json={
            "label_id": label["id"],
            "printer": site.printer["name"],
            "data": [{"name": "a"}, {"name": "b"}],
        },
    ).json()
    serials = [
        operator.get(f"/print-archive/{e}").json()["serials"][name]
        for e in answer["archive_entry_ids"]
    ]
    assert serials == ["SN0007", "SN0012"]
    site.report(site.claim(), "confirmed", final=True)
    assert operator.post(f"/counters/{name}/deactivate").json()["active"] is False
    problem(
        operator.post(
            "/print",
            json={
                "label_id": label["id"],
                "printer": site.printer["name"],
                "variables": {"name": "c"},
            },
        ),
        409,
        "counter.inactive",
    )


def test_outcomes_become_events(
    admin: Api, operator: Api, site: Site, dev_server: DevServer
) -> None:
    label = _released_label(admin)
    accepted = operator.post(
        "/print",
        json={
            "label_id": label["id"],
            "printer": site.printer["name"],
            "variables": {"name": "evt"},
        },
    ).json()
    job = site.claim()
    site.report(job, "held", reason="paper_out")
    assert (
        operator.get(f"/print-archive/{accepted['archive_entry_ids'][0]}").json()["outcome"]
        == "held"
    )
    site.report(job, "held", reason="paper_out")  # the Runner repeats itself: no new event
    site.report(job, "sent")
    site.report(job, "confirmed", final=True)
    kinds = sorted(e["kind"] for e in _events_of(dev_server, accepted["job_id"]))
    assert kinds == ["print.confirmed", "print.held", "print.sent"]


def _offline_printer(admin: Api, tmp_path: Path, name: str) -> tuple[FakeSite, dict[str, Any]]:
    """A printer of an enrolled Runner that has not been heard from since: offline."""
    group = admin.post("/runner-groups", json={"name": unique(name)}).json()
    token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    runner = FakeSite(tmp_path, name)
    runner.enroll(admin, token["token"])
    printer = admin.post(
        "/printers",
        json={
            "name": unique(name),
            "runner_id": runner.enrollment["runner_id"],
            "uri": "tcp://127.0.0.1:9100",
            "language": "zpl",
            "dpi": 203,
        },
    ).json()
    return runner, printer


def test_offline_runner_holds_the_job_and_cancel_stops_it(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    runner, printer = _offline_printer(admin, tmp_path, "sleepy")
    label = _released_label(admin)
    accepted = operator.post(
        "/print",
        json={"label_id": label["id"], "printer": printer["name"], "variables": {"name": "wait"}},
    ).json()
    assert accepted["status"] == "held"
    job = operator.get(f"/jobs/{accepted['job_id']}").json()
    assert job["outcome_reason"] == "runner_offline"
    assert operator.post(f"/jobs/{accepted['job_id']}/cancel").json()["status"] == "cancelled"
    entry = operator.get(f"/print-archive/{accepted['archive_entry_ids'][0]}").json()
    assert (entry["outcome"], entry["outcome_reason"]) == ("failed", "cancelled")
    # The recorded outcome is announced too: held when accepted, failed (cancelled) now.
    events = [(e["kind"], e["data"]["reason"]) for e in _events_of(dev_server, job["id"])]
    assert events == [("print.held", "runner_offline"), ("print.failed", "cancelled")]
    agent = runner.agent(dev_server)
    assert agent.post("/jobs/claim", json={"wait_seconds": 1}).json()["jobs"] == []


def test_a_held_job_keeps_its_outcome_when_its_runner_comes_back(
    admin: Api, operator: Api, dev_server: DevServer, tmp_path: Path
) -> None:
    """Claimed, the job is `running` (not an outcome): the archive keeps showing `held` until
    the Runner reports the next outcome, never null again."""
    runner, printer = _offline_printer(admin, tmp_path, "late")
    label = _released_label(admin)
    accepted = operator.post(
        "/print",
        json={"label_id": label["id"], "printer": printer["name"], "variables": {"name": "late"}},
    ).json()
    entry_path = f"/print-archive/{accepted['archive_entry_ids'][0]}"

    def outcome() -> tuple[str | None, str | None]:
        entry = operator.get(entry_path).json()
        return entry["outcome"], entry["outcome_reason"]

    assert outcome() == ("held", "runner_offline")
    agent = runner.agent(dev_server)
    (job,) = agent.post("/jobs/claim", json={"wait_seconds": 2}).json()["jobs"]
    assert operator.get(f"/jobs/{job['job_id']}").json()["status"] == "running"
    assert outcome() == ("held", "runner_offline")
    held_at = operator.get(entry_path).json()["outcome_at"]
    response = agent.post(
        f"/jobs/{job['job_id']}/report",
        json={"receipt": job["receipt"], "status": "running", "messages": [{"text": "Sending"}]},
    )
    assert response.status_code == 200, response.text
    assert outcome() == ("held", "runner_offline")
    assert operator.get(entry_path).json()["outcome_at"] == held_at
    agent.post(f"/jobs/{job['job_id']}/report", json={"receipt": job["receipt"], "status": "sent"})
    assert outcome() == ("sent", None)
    agent.post(
        f"/jobs/{job['job_id']}/report",
        json={"receipt": job["receipt"], "status": "confirmed", "final": True},
    )
    assert outcome() == ("confirmed", None)
    kinds = [e["kind"] for e in _events_of(dev_server, job["job_id"])]
    assert kinds == ["print.held", "print.sent", "print.confirmed"]


def test_a_label_that_cannot_render_fails_its_job_and_says_so(
    admin: Api, operator: Api, site: Site, dev_server: DevServer
) -> None:
    label = _released_label(
        admin,
        extra_ops=[
            {
                "op": "add",
                "path": "/objects/-",
                "value": {
                    "id": "ean",
                    "type": "barcode",
                    "symbology": "ean13",
                    "x_mm": 2,
                    "y_mm": 8,
                    "height_mm": 8,
                    "expression": "name",
                },
            }
        ],
    )
    response = operator.post(
        "/print",
        json={
            "label_id": label["id"],
            "printer": site.printer["name"],
            "variables": {"name": "not digits"},
        },
    )
    assert response.status_code == 422, response.text
    (entry,) = operator.get("/print-archive", params={"label_id": label["id"]}).json()["items"]
    assert (entry["outcome"], entry["outcome_reason"]) == ("failed", "render_failed")
    job = operator.get(f"/jobs/{entry['job_id']}").json()
    assert (job["status"], job["outcome"]) == ("failed", "failed")
    events = [(e["kind"], e["data"]["reason"]) for e in _events_of(dev_server, job["id"])]
    assert events == [("print.failed", "render_failed")]
    assert site.agent.post("/jobs/claim", json={"wait_seconds": 1}).json()["jobs"] == []


# operations.md (Printing, Counters, and the jobs a print becomes): id -> (roles, human, mcp).
# `admin` may do everything and is not listed.
CONTRACT = {
    "postPrint": (["operator"], False, True),
    "listPrintArchive": (["approver", "operator"], False, True),
    "getPrintArchiveEntry": (["approver", "operator"], False, True),
    "getJob": (["approver", "designer", "operator"], False, True),
    "postJobCancel": (["operator"], False, True),
    "listCounters": (["any"], False, True),
    "createCounter": (["designer", "operator"], False, True),
    "getCounter": (["any"], False, True),
    "postCounterDeactivate": (["operator"], False, True),
}


def test_printing_and_counter_operations_publish_the_contracts_roles(operator: Api) -> None:
    spec = operator.get("/openapi.json").json()
    operations = {op["operationId"]: op for item in spec["paths"].values() for op in item.values()}
    for operation_id, (roles, human, mcp) in CONTRACT.items():
        op = operations[operation_id]
        assert op["x-etikett-access"] == {
            "authenticated": True,
            "roles": roles,
            "human": human,
        }, operation_id
        assert op["x-etikett-mcp"] is mcp, operation_id
        assert {"401", "403"} <= set(op["responses"]), operation_id
    # The print path's problem codes are in the catalog.
    assert {
        "print.label_not_released",
        "print.variables_invalid",
        "print.too_many_records",
        "counter.inactive",
        "job.not_cancellable",
    } <= set(spec["x-etikett-problem-codes"])


def test_counter_roles_are_enforced(admin: Api, operator: Api) -> None:
    name = _counter(operator)
    designer = admin.user_session(["designer"])[1]
    approver = admin.user_session(["approver"])[1]
    body = problem(designer.post(f"/counters/{name}/deactivate"), 403, "auth.forbidden")
    assert body["params"]["required"] == ["operator"]
    body = problem(
        approver.post("/counters", json={"name": unique("x").replace("-", "_")}),
        403,
        "auth.forbidden",
    )
    assert body["params"]["required"] == ["designer", "operator"]
    assert (
        designer.post("/counters", json={"name": unique("d").replace("-", "_")}).status_code == 201
    )
    assert approver.get(f"/counters/{name}").json()["active"] is True  # any role reads
    assert operator.post(f"/counters/{name}/deactivate").json()["active"] is False


def test_print_roles(admin: Api, site: Site) -> None:
    label = _released_label(admin)
    designer = admin.user_session(["designer"])[1]
    problem(
        designer.post("/print", json={"label_id": label["id"], "printer": site.printer["name"]}),
        403,
        "auth.forbidden",
    )
    approver = admin.user_session(["approver"])[1]
    assert approver.get("/print-archive").status_code == 200
    problem(designer.get("/print-archive"), 403, "auth.forbidden")
