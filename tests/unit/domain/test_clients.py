"""Every table's client and every boto3 client of the service come from one botocore session: a
function's first requests read botocore's data files once, not once for each table and service
they touch (60-130 ms of CPU each)."""

from __future__ import annotations

import threading
import time
from pathlib import PurePosixPath
from typing import Any

import botocore
import botocore.session
import pytest
from botocore.loaders import JSONFileLoader

from etikett import API_VERSION
from etikett.store import base as store
from etikett.store import clients, jobs, labels, printers, runners, users
from etikett.store.idempotency import persistence

pytestmark = pytest.mark.usefixtures("aws")

# What botocore reads for the first client of a session, whichever service it is for.
EVERY_SESSION = {"endpoints", "sdk-default-configuration", "partitions"}


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of botocore's data files read from now on."""
    seen: list[str] = []
    original = JSONFileLoader.load_file

    def load_file(self: JSONFileLoader, file_path: str) -> object:
        seen.append(PurePosixPath(file_path).name)
        return original(self, file_path)

    monkeypatch.setattr(JSONFileLoader, "load_file", load_file)
    return seen


@pytest.fixture
def fresh() -> None:
    """Every table's connection, every client and the session made again at their next use, as
    in a function's first request."""
    store.bind()


@pytest.mark.usefixtures("fresh")
def test_the_first_table_reads_botocores_files_and_the_others_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _reads(monkeypatch)
    assert jobs.get("job_not_there") is None
    assert set(seen) >= EVERY_SESSION
    assert "service-2" in seen  # DynamoDB's model
    seen.clear()

    assert printers.get("prn_not_there") is None
    assert runners.get_runner("run_not_there") is None
    assert labels.get("lbl_not_there") is None
    assert users.get("nobody@example.com") is None
    assert store.connection().client is not None  # the transactions' own connection
    assert seen == []


@pytest.mark.usefixtures("fresh")
def test_boto3_clients_read_only_their_own_services_files(monkeypatch: pytest.MonkeyPatch) -> None:
    assert jobs.get("job_not_there") is None
    seen = _reads(monkeypatch)
    clients.client("sqs").list_queues()
    assert seen and not EVERY_SESSION & set(seen)  # SQS's model and rules only
    seen.clear()

    clients.client("dynamodb").list_tables()
    persistence.cache_clear()
    persistence()  # Powertools' idempotency records: the same client, not a session of its own
    assert seen == []


@pytest.mark.usefixtures("fresh")
def test_tables_first_used_in_many_threads_at_once_make_their_clients_one_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    making = {"now": 0, "most": 0}
    counting = threading.Lock()
    original = botocore.session.Session.create_client

    def create_client(self: Any, *args: Any, **kwargs: Any) -> Any:
        with counting:
            making["now"] += 1
            making["most"] = max(making["most"], making["now"])
        try:
            time.sleep(0.01)  # long enough for a second thread to arrive meanwhile
            return original(self, *args, **kwargs)
        finally:
            with counting:
                making["now"] -= 1

    monkeypatch.setattr(botocore.session.Session, "create_client", create_client)
    reads = [jobs.get, printers.get, runners.get_runner, labels.get, users.get] * 2
    answers: list[object] = []
    failures: list[BaseException] = []
    start = threading.Barrier(len(reads))

    def read(get: Any) -> None:
        start.wait()
        try:
            answers.append(get("not_there"))
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=read, args=(get,)) for get in reads]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert answers == [None] * len(reads)
    assert making["most"] == 1  # a botocore session is not safe to make two clients at once


@pytest.mark.usefixtures("fresh")
def test_requests_name_the_service_as_their_user_agent() -> None:
    agents: list[str] = []

    def seen(request: Any, **_: Any) -> None:
        agents.append(request.headers["User-Agent"].decode())

    tables = store.connection().client  # pynamodb's, as every table's
    tables.meta.events.register_first("before-send", seen)
    sqs = clients.client("sqs")
    sqs.meta.events.register_first("before-send", seen)
    tables.list_tables()
    sqs.list_queues()
    assert len(agents) == 2
    ours = f"etikett/{API_VERSION.removeprefix('v')} Botocore/{botocore.__version__}"
    for agent in agents:
        # Ours, then what Powertools appends once imported; not botocore's own (`ua/2.1 …`).
        assert agent == ours or agent.startswith(f"{ours} PT/"), agent


def test_every_tables_items_share_the_session() -> None:
    plain = [model.__name__ for model in store.table_items() if not issubclass(model, store.Item)]
    assert plain == []  # an item class of pynamodb's Model alone would make a session of its own
