"""The folders deployed flows may use: only inside the data folder and the site's watch roots,
where they really are (links followed, then checked), never the state directory; inside a
watched folder only regular files are taken (links, pipes and hard-linked files are skipped and
told once); files are moved and written without following a link. The attacks: a flow that
watches `..`, the state directory by its absolute path, or a folder linked to it, and a link to
the key dropped into a watched folder, must never move the Runner's key or put it into a run."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from etikett_runner.connectivity import Connectivity
from etikett_runner.flow_effects import SiteEffects
from etikett_runner.flow_host import FlowHost
from etikett_runner.identity import create_key
from etikett_runner.roots import AllowedRoots, PathRefused, RootsOverlap
from etikett_runner.site_folders import Folder, write_inside
from etikett_runner.tuning import Tuning
from runner_fakes import FakeChannel, eventually, spec, statuses

from etikett_engine.flows.effects import EffectFailed, FileIntent

LABEL = "lbl_01J9Z8Q4X6V2M3N5P7R9S1T3V5"


def folder_flow(path: str, **fields: Any) -> dict[str, Any]:
    return {
        "nodes": [
            {"id": "in", "type": "trigger.folder", "path": path, "wires": ["p"], **fields},
            {
                "id": "p",
                "type": "action.print",
                "label": LABEL,
                "printer": "ship",
                "variables": {"line": "record"},
            },
        ]
    }


class Site:
    """A Runner's state directory with its real key, its data folder inside it (the default),
    and deployed flows run by a FlowHost against a fake agent channel."""

    def __init__(self, tmp_path: Path, watch_roots: tuple[Path, ...] = ()) -> None:
        self.state = tmp_path / "state"
        self.state.mkdir(mode=0o700)
        self.key = self.state / "key.pem"
        create_key(self.key)
        self.key_bytes = self.key.read_bytes()
        self.data = self.state / "data"
        self.channel = FakeChannel()
        self.stop = threading.Event()
        self.roots = AllowedRoots.of(self.data, watch_roots, self.state)
        self.host = FlowHost(
            self.channel,  # type: ignore[arg-type]
            self.state,
            self.data,
            Connectivity(self.stop),
            lambda removed: None,
            tuning=Tuning(flows_seconds=0.05, folder_seconds=0.1, flow_retry_seconds=0.2),
            roots=self.roots,
        )
        self.thread = threading.Thread(target=self.host.run, args=(self.stop,), daemon=True)

    def deploy(self, document: dict[str, Any]) -> None:
        self.channel.wanted = [spec(document)]
        if not self.thread.is_alive():
            self.thread.start()

    def last_status(self) -> tuple[str, str | None] | None:
        told = statuses(self.channel)
        return told[-1] if told and told[-1][0] != "applying" else None

    def everything_sent(self) -> str:
        with self.channel.lock:
            return repr([self.channel.runs, self.channel.prints, self.channel.statuses])

    def key_untouched(self) -> None:
        assert self.key.read_bytes() == self.key_bytes
        sent = self.everything_sent()
        assert "PRIVATE KEY" not in sent and self.key_bytes.decode()[40:80] not in sent

    def close(self) -> None:
        self.stop.set()
        if self.thread.is_alive():
            self.thread.join(10)


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    made = Site(tmp_path)
    yield made
    made.close()


def polls(count: int = 5) -> None:
    time.sleep(0.1 * count)  # a watched folder is looked at every 0.1 s here


# --- the attack: a flow that reaches for the state directory -----------------------------------


@pytest.mark.parametrize("how", ["dot-dot", "absolute", "linked folder", "linked root"])
def test_a_folder_trigger_never_reaches_the_state_directory(site: Site, how: str) -> None:
    site.data.mkdir()
    path = {"dot-dot": "..", "absolute": str(site.state)}.get(how, "linked")
    if how == "linked folder":
        (site.data / "linked").symlink_to(site.state, target_is_directory=True)
    if how == "linked root":  # a folder beside the data folder, linked into it
        (site.data / "linked").symlink_to(site.state / "outbox", target_is_directory=True)
        (site.state / "outbox").mkdir()
    site.deploy(folder_flow(path))
    status, detail = eventually(site.last_status, 10)
    assert status == "failed"
    assert str(detail).startswith("flow.path_outside_roots: the watched folder"), detail
    assert "is outside the folders this Runner may use" in str(detail)
    polls()
    site.key_untouched()
    assert not (site.state / "processing").exists()  # nothing made there, nothing moved
    assert site.channel.runs == [] and site.channel.prints == []


def test_a_flow_inside_the_roots_still_runs(tmp_path: Path) -> None:
    shared = tmp_path / "site-share"
    (shared / "in").mkdir(parents=True)
    site = Site(tmp_path, watch_roots=(shared,))
    try:
        # The watch root is named through a link: it counts where it really is.
        (tmp_path / "alias").symlink_to(shared, target_is_directory=True)
        site.deploy(folder_flow(str(tmp_path / "alias" / "in")))
        assert eventually(site.last_status, 10) == ("active", None)
        (shared / "in" / "orders.csv").write_text("n\n1\n")
        eventually(lambda: site.channel.runs, 10)
        assert site.channel.prints[0]["records"] == [{"line": {"n": "1"}}]
        assert eventually(lambda: (shared / "in" / "done" / "orders.csv").exists(), 10)
    finally:
        site.close()


# --- inside a watched folder: regular files only -----------------------------------------------


def test_links_pipes_and_hard_links_are_skipped_and_told_once(site: Site, tmp_path: Path) -> None:
    inbox = site.data / "in"
    inbox.mkdir(parents=True)
    site.deploy(folder_flow("in"))
    assert eventually(site.last_status, 10) == ("active", None)
    (inbox / "key.csv").symlink_to(site.key)
    os.mkfifo(inbox / "pipe.csv")
    elsewhere = tmp_path / "elsewhere.csv"
    elsewhere.write_text("n\nsecret-of-another-file\n")
    os.link(elsewhere, inbox / "linked.csv")
    polls(8)
    runs = {run["trigger"]["source"]: run for run in site.channel.runs}
    assert set(runs) == {"key.csv", "pipe.csv", "linked.csv"}  # once each, not every poll
    assert len(site.channel.runs) == 3
    for name, kind in (
        ("key.csv", "a symbolic link"),
        ("pipe.csv", "not a regular file"),
        ("linked.csv", "a file with other names"),
    ):
        run = runs[name]
        assert run["outcome"] == "failed" and run["records"] == 0
        assert run["trace"]["problem"].startswith("flow.path_not_regular: ")
        assert (
            kind in run["trace"]["problem"] and "nothing read or moved" in run["trace"]["problem"]
        )
        (note,) = run["trace"]["log"]
        assert note["level"] == "warning" and kind in note["message"]
    site.key_untouched()
    assert "secret-of-another-file" not in site.everything_sent()
    assert (inbox / "key.csv").is_symlink() and (inbox / "pipe.csv").exists()  # left alone
    assert site.channel.prints == []
    # Gone and back: told again; a regular file beside them is taken as ever.
    (inbox / "key.csv").unlink()
    polls(3)
    (inbox / "key.csv").symlink_to(site.key)
    (inbox / "good.csv").write_text("n\n1\n")
    eventually(lambda: len(site.channel.runs) == 5, 10)
    sources = sorted(run["trigger"]["source"] for run in site.channel.runs[3:])
    assert sources == ["good.csv", "key.csv"]
    assert site.channel.prints[0]["records"] == [{"line": {"n": "1"}}]
    site.key_untouched()


def test_a_subfolder_that_is_a_link_stops_the_flow(site: Site) -> None:
    inbox = site.data / "in"
    inbox.mkdir(parents=True)
    (inbox / "processing").symlink_to(site.state, target_is_directory=True)
    (inbox / "left.csv").write_text("n\n1\n")
    site.deploy(folder_flow("in"))
    status, detail = eventually(site.last_status, 10)
    assert status == "failed" and str(detail).startswith("flow.path_not_regular: "), detail
    assert "processing is a symbolic link, not a folder" in str(detail)
    polls()
    site.key_untouched()
    assert (inbox / "left.csv").exists()


def test_a_done_folder_swapped_for_a_link_keeps_the_file_where_it_is(site: Site) -> None:
    inbox = site.data / "in"
    inbox.mkdir(parents=True)
    site.deploy(folder_flow("in"))
    assert eventually(site.last_status, 10) == ("active", None)
    site.channel.away = True  # the run waits in the journal, its file in processing/
    (inbox / "orders.csv").write_text("n\n1\n")
    eventually(lambda: list((inbox / "processing").iterdir()), 10)
    (inbox / "done").rename(inbox / "done.before")
    (inbox / "done").symlink_to(site.state, target_is_directory=True)
    site.channel.away = False
    eventually(lambda: site.channel.runs, 10)
    polls(3)
    assert not any(p.name.endswith("orders.csv") for p in site.state.iterdir())
    assert [p.name.split(".", 1)[1] for p in (inbox / "processing").iterdir()] == ["orders.csv"]
    site.key_untouched()


# --- action.file -----------------------------------------------------------------------------


def test_action_file_never_writes_through_a_link_or_outside(tmp_path: Path) -> None:
    state = tmp_path / "state"
    data = state / "data"
    data.mkdir(parents=True)
    key = state / "key.pem"
    key.write_text("KEY")
    (data / "out").symlink_to(state, target_is_directory=True)
    (data / "key.txt").symlink_to(key)
    effects = SiteEffects(data)
    with pytest.raises(EffectFailed, match=r"^flow\.path_not_regular: .*out is a symbolic link"):
        effects.file(FileIntent("f", "out/key.pem", "overwritten"))
    for escape in ("../key.pem", "/etc/passwd", "C:/x", "a/../../key.pem", "."):
        with pytest.raises(EffectFailed, match=r"^flow\.path_outside_roots: .*outside"):
            effects.file(FileIntent("f", escape, "overwritten"))
    # A link as the file itself is replaced by the new file, never written through.
    outcome = effects.file(FileIntent("f", "key.txt", "written"))
    assert outcome.detail == {"path": "key.txt", "bytes": 7}
    assert key.read_text() == "KEY" and not (data / "key.txt").is_symlink()
    assert (data / "key.txt").read_text() == "written"
    assert write_inside(data, "deep/er/file.txt", b"x") == "deep/er/file.txt"


# --- the rules themselves --------------------------------------------------------------------


def test_the_state_directory_and_the_roots_stay_apart(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "data").mkdir(parents=True)
    (state / "outbox").mkdir()
    AllowedRoots.of(state / "data", (tmp_path / "site",), state).check_state_dir()  # default
    for data, roots in (
        (tmp_path, ()),  # the state directory inside the data folder
        (state, ()),  # the state directory as the data folder
        (state / "data", (state / "outbox",)),  # a root inside the state directory
        (state / "data", (tmp_path,)),  # a root holding the state directory
    ):
        with pytest.raises(RootsOverlap, match="a deployed flow could read or move its key"):
            AllowedRoots.of(data, roots, state).check_state_dir()
    # A root that comes to overlap later (a link made since) stops counting.
    (tmp_path / "later").symlink_to(state, target_is_directory=True)
    roots = AllowedRoots.of(state / "data", (tmp_path / "later",), state)
    with pytest.raises(PathRefused, match="outside"):
        roots.inside(state / "key.pem", "the key")


def test_a_pipe_is_never_opened_for_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with Folder.open(tmp_path, AllowedRoots.of(tmp_path), "here") as folder:
        started = time.monotonic()
        with pytest.raises(PathRefused, match="not a regular file"):
            folder.read("pipe", 100)  # O_NONBLOCK: no writer, no wait
        assert time.monotonic() - started < 1
        (tmp_path / "big").write_bytes(b"x" * 101)
        with pytest.raises(ValueError, match="more than 100 bytes"):
            folder.read("big", 100)
