"""End to end: a real `etikett-runner` process started as a site would (its data folder inside
its state directory, as by default, one --watch-root, an HTTP trigger port) keeps deployed
flows away from its key: a flow that watches the state directory by its absolute path, or
through a folder linked to it, fails on the Runner with `flow.path_outside_roots` and nothing
of the state directory moves or reaches a run; a link to the key dropped into a watched folder
is skipped and told once. Its HTTP trigger port takes JSON from machines only, with the
trigger's secret, and never from a web page or under a foreign Host name.

The tests of this module share one service and one Runner, in the order written."""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from e2e.runners import TUNING, RunnerProcess, eventually, start_enrolled
from support.client import Api
from support.server import free_port

FLOW_TUNING = [*TUNING, "--flows-seconds", "0.5", "--flow-retry-seconds", "1"]
SECRET = "e2e-trigger-Jq8vT2"


@dataclass
class Site:
    process: RunnerProcess
    group_id: str
    runner_id: str
    port: int
    state: Path
    share: Path  # the --watch-root
    key: bytes  # key.pem as it was when the Runner enrolled
    approver: Api

    def post(self, path: str, body: Any = None, **kwargs: Any) -> httpx.Response:
        if "content" not in kwargs:
            kwargs["json"] = body if body is not None else {"n": 1}
        url = f"http://127.0.0.1:{self.port}/flows/{path}"
        return httpx.post(url, timeout=10, trust_env=False, **kwargs)


@pytest.fixture(scope="module")
def site(server: Any, admin: Api, workdir: Path) -> Iterator[Site]:
    state, share = workdir / "runner-state", workdir / "share"
    (share / "in").mkdir(parents=True)
    process = RunnerProcess(state, workdir / "runner.log")
    port = free_port()
    group = start_enrolled(
        process,
        server,
        admin,
        "Halle Sicher",
        *FLOW_TUNING,
        "--listen",
        str(port),
        "--watch-root",
        str(share),
    )
    try:
        runner_id = eventually(lambda: process.enrolled_as, 30)
        eventually(lambda: admin.get(f"/runners/{runner_id}").json()["status"] == "online")
        made = admin.post("/credentials", json={"ref": "erp-in", "kind": "secret", "value": SECRET})
        assert made.status_code == 201, made.text
        yield Site(
            process,
            group["id"],
            runner_id,
            port,
            state,
            share,
            (state / "key.pem").read_bytes(),
            admin.user_session(["approver"])[1],
        )
    finally:
        if process.running:
            process.stop()


def deploy(admin: Api, site: Site, name: str, nodes: list[dict[str, Any]]) -> tuple[str, str]:
    """Create, deploy and approve a flow on the site's group: (flow id, deployment id)."""
    flow = admin.post("/flows", json={"name": name, "document": {"nodes": nodes}})
    assert flow.status_code == 201, flow.text
    created = admin.post(
        "/deployments",
        json={
            "flow_id": flow.json()["id"],
            "version": 1,
            "stages": [{"group_ids": [site.group_id]}],
        },
    )
    assert created.status_code == 201, created.text
    approved = site.approver.post(
        f"/deployments/{created.json()['id']}/approval", json={"stage": 0}
    )
    assert approved.status_code == 200, approved.text
    return flow.json()["id"], created.json()["id"]


def runner_status(admin: Api, deployment_id: str) -> tuple[str, str | None] | None:
    view = admin.get(f"/deployments/{deployment_id}").json()
    (runner,) = view["stages"][0]["runners"] or [None]
    if runner is None or runner["status"] in ("pending", "applying"):
        return None
    return runner["status"], runner["detail"]


def runs(admin: Api, flow_id: str) -> list[dict[str, Any]]:
    return list(admin.get(f"/flows/{flow_id}/runs", params={"limit": 100}).json()["items"])


LOG = {"id": "log", "type": "action.log", "message": "string(record)"}


def state_untouched(admin: Api, site: Site, *flow_ids: str) -> None:
    """The key where it was, as it was, and in no run of these flows."""
    assert (site.state / "key.pem").read_bytes() == site.key
    assert not (site.state / "processing").exists() and not (site.state / "done").exists()
    for flow_id in flow_ids:
        listed = admin.get(f"/flows/{flow_id}/runs", params={"limit": 100}).text
        assert "PRIVATE KEY" not in listed


@pytest.mark.parametrize("how", ["absolute", "linked"])
def test_a_flow_cannot_watch_the_runners_state_directory(admin: Api, site: Site, how: str) -> None:
    path = str(site.state)
    if how == "linked":  # a folder in the data folder that links to the state directory
        (site.state / "data").mkdir(exist_ok=True)
        (site.state / "data" / "linked").symlink_to(site.state, target_is_directory=True)
        path = "linked"
    watch = {"id": "in", "type": "trigger.folder", "path": path, "wires": ["log"]}
    flow_id, deployment_id = deploy(admin, site, f"Steal the key ({how})", [watch, LOG])
    status, detail = eventually(lambda: runner_status(admin, deployment_id), 30, 0.2)
    assert status == "failed", detail
    assert str(detail).startswith("flow.path_outside_roots: the watched folder"), detail
    assert f"resolves to {site.state}" in str(detail) or str(site.state) in str(detail)
    time.sleep(1.5)  # a Runner that watched it would have taken key.pem by now
    state_untouched(admin, site, flow_id)
    assert runs(admin, flow_id) == []


def test_a_watch_root_works_and_a_link_to_the_key_in_it_is_skipped(admin: Api, site: Site) -> None:
    watch = {"id": "in", "type": "trigger.folder", "path": str(site.share / "in"), "wires": ["log"]}
    flow_id, deployment_id = deploy(admin, site, "Share inbox", [watch, LOG])
    assert eventually(lambda: runner_status(admin, deployment_id), 30, 0.2) == ("active", None)
    (site.share / "in" / "key.csv").symlink_to(site.state / "key.pem")
    aside = site.share / "in" / ".orders.csv.part"
    aside.write_text("n\n1\n")
    aside.rename(site.share / "in" / "orders.csv")
    done = eventually(lambda: len(runs(admin, flow_id)) == 2 and runs(admin, flow_id), 30, 0.2)
    by_source = {run["trigger"]["source"]: run for run in done}
    assert by_source["orders.csv"]["outcome"] == "succeeded"
    skipped = by_source["key.csv"]
    assert skipped["outcome"] == "failed" and skipped["records"] == 0
    assert skipped["trace"]["problem"].startswith("flow.path_not_regular: ")
    assert "a symbolic link" in skipped["trace"]["log"][0]["message"]
    time.sleep(1)  # looked at again and again: told once
    assert len(runs(admin, flow_id)) == 2
    assert (site.share / "in" / "key.csv").is_symlink()
    assert (site.share / "in" / "done" / "orders.csv").exists()
    state_untouched(admin, site, flow_id)


def test_the_http_trigger_takes_json_from_machines_with_the_secret_only(
    admin: Api, site: Site
) -> None:
    web = {"id": "web", "type": "trigger.http", "path": "erp", "secret": "erp-in", "wires": ["log"]}
    flow_id, deployment_id = deploy(admin, site, "ERP orders", [web, LOG])
    assert eventually(lambda: runner_status(admin, deployment_id), 30, 0.2) == ("active", None)
    bearer = {"authorization": f"Bearer {SECRET}"}

    def refused(response: httpx.Response) -> tuple[int, str]:
        return response.status_code, response.json()["code"]

    assert refused(site.post("erp")) == (401, "trigger.secret_required")
    assert refused(site.post("erp", headers={"authorization": "Bearer guess"}))[0] == 401
    page = {**bearer, "origin": "http://intranet.example", "sec-fetch-site": "cross-site"}
    assert refused(site.post("erp", headers=page)) == (403, "trigger.cross_site")
    rebound = {**bearer, "host": f"attacker.example:{site.port}"}
    assert refused(site.post("erp", headers=rebound)) == (421, "trigger.host_refused")
    form = {**bearer, "content-type": "application/x-www-form-urlencoded"}
    assert refused(site.post("erp", headers=form, content=b"n=1")) == (415, "trigger.media_type")
    sent = site.post("erp", {"n": 7}, headers=bearer)
    assert sent.status_code == 202, sent.text
    (run,) = eventually(lambda: runs(admin, flow_id), 30, 0.2)
    assert run["id"] == sent.json()["run_id"] and run["records"] == 1
    assert SECRET not in site.process.output()
    assert SECRET not in admin.get(f"/deployments/{deployment_id}").text
