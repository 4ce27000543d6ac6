"""Nothing is lost across restarts of the dev server, and nothing comes twice: an event delivered
before a stop is not delivered again, one committed just before it is delivered after the restart,
once, and a delivery retrying at a stop goes on after it."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from etikett.local.stream_checkpoints import CHECKPOINT_FILE
from support.client import PASSWORD, Api, unique
from support.server import DevServer

from .receiver import Receiver


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    dev = DevServer(tmp_path_factory.mktemp("restarts") / "home")
    dev.start()
    yield dev
    if dev.process is not None and dev.process.poll() is None:
        dev.stop()


def _restart(server: DevServer) -> None:
    assert server.stop() == 0
    checkpoints = json.loads((server.home / CHECKPOINT_FILE).read_text())
    assert checkpoints["clean"] is True
    server.start()


def _approve(admin: Api) -> str:
    label = admin.post(
        "/labels/from-dimensions", json={"name": unique("r"), "width_mm": 40, "height_mm": 20}
    ).json()
    answer = admin.post(f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"})
    assert answer.status_code == 200, answer.text
    return str(label["id"])


def test_events_survive_restarts_and_come_once(server: DevServer) -> None:
    setup = Api(server.url).post("/auth/setup", json={"username": "root", "password": PASSWORD})
    admin = Api(server.url, setup.json()["token"])
    with Receiver() as steady, Receiver([500]) as flaky:
        for receiver in (steady, flaky):
            created = admin.post(
                "/webhooks", json={"url": receiver.url, "events": ["label.approved"]}
            )
            assert created.status_code == 201, created.text

        def seen(receiver: Receiver, label_id: str) -> list[int]:
            return [
                r.status
                for r in receiver.requests
                if json.loads(r.body)["data"]["label_id"] == label_id
            ]

        first = _approve(admin)
        steady.wait_for(lambda _: seen(steady, first) == [200])
        flaky.wait_for(lambda _: seen(flaky, first) == [500])  # retried in 2 s
        second = _approve(admin)  # committed; most likely not yet published
        _restart(server)

        steady.wait_for(lambda _: seen(steady, second) == [200])
        flaky.wait_for(lambda _: seen(flaky, second) == [200])
        flaky.wait_for(lambda _: seen(flaky, first) == [500, 200])
        _restart(server)
        time.sleep(3)
        assert [seen(steady, first), seen(steady, second)] == [[200], [200]]
        assert [seen(flaky, first), seen(flaky, second)] == [[500, 200], [200]]
        assert len(steady.requests) == 2 and len(flaky.requests) == 3
        for receiver in (steady, flaky):
            ids = {json.loads(r.body)["id"] for r in receiver.requests}
            assert ids == {r.headers["webhook-id"] for r in receiver.requests} and len(ids) == 2


def test_checkpoints_live_beside_the_local_state(server: DevServer) -> None:
    home: Path = server.home
    assert (home / CHECKPOINT_FILE).is_file() and (home / "aws-state.pickle").is_file()
    (streams,) = json.loads((home / CHECKPOINT_FILE).read_text())["streams"].items()
    arn, shards = streams
    assert "EventsTable/stream/" in arn and len(shards) == 1
