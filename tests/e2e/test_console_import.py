"""Importing a label file in the console (Debian's chromium under Playwright, a real service): the
labels page's "Import file" uploads a ZPL file with the console's CSRF header, and its answer shows
each label created with "Imported exactly" or "Imported with n warnings", the report's warnings
with the line they concern, and the notes apart; a refused file shows its problem and code."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from support import browser as browsing
from support.browser import Session, console_session
from support.client import PASSWORD, Api, unique
from support.server import DevServer

pytestmark = pytest.mark.console

EXACT = "^XA^PW400^LL200^FO20,20^A0N,40,40^FDExakt^FS^FO20,100^GB300,4,4^FS^XZ"
# Line 4 drops a Codabar (^BK) the label model lacks; line 5's QR asks for level H; line 6 is a
# printer setting (a note, not a warning).
WITH_WARNINGS = """^XA
^PW400^LL300
^FO20,20^A0N,30,30^FDMit Hinweisen^FS
^FO20,70^BKN,N,60,Y,N^FDA123B^FS
^FO200,150^BQN,2,4^FDHA,https://example.com/p/1^FS
^PQ2
^XZ
"""


@pytest.fixture(scope="module")
def designer(admin: Api) -> dict[str, Any]:
    return admin.create_user(["designer"], username=unique("dana"))


@pytest.fixture
def console(browser: Browser, server: DevServer) -> Iterator[Session]:
    with console_session(browser, viewport={"width": 1280, "height": 800}) as session:
        yield session
        session.assert_clean(server.url)


def _screenshot(page: Page, name: str) -> None:
    """For a person to look at (ETIKETT_SCREENSHOTS=folder); nothing is compared."""
    if os.environ.get("ETIKETT_SCREENSHOTS"):
        page.screenshot(path=os.path.join(os.environ["ETIKETT_SCREENSHOTS"], name))


def _import(page: Page, path: Path) -> None:
    page.get_by_role("button", name="Import file").click()
    dialog = page.get_by_role("dialog", name="Import a label file")
    expect(dialog.get_by_label("File", exact=True)).to_be_focused()  # keyboard users start there
    _screenshot(page, "import-form.png")
    dialog.get_by_label("File", exact=True).set_input_files(str(path))
    dialog.get_by_role("button", name="Import", exact=True).click()


def test_an_import_shows_how_exactly_each_label_came_through(
    console: Session, server: DevServer, admin: Api, designer: dict[str, Any], tmp_path: Path
) -> None:
    page = console.page
    browsing.sign_in(page, server.url, designer["username"], PASSWORD)
    (tmp_path / "exakt.zpl").write_text(EXACT)
    (tmp_path / "hinweise.zpl").write_text(WITH_WARNINGS)

    _import(page, tmp_path / "exakt.zpl")
    dialog = page.get_by_role("dialog", name="Import a label file")
    expect(dialog.get_by_role("status")).to_contain_text(
        "1 label created as a draft, 1 imported exactly"
    )
    expect(dialog.get_by_text("Imported exactly", exact=True)).to_be_visible()
    expect(dialog.get_by_text("No warnings")).to_be_visible()
    dialog.get_by_role("button", name="Done").click()
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("link", name="exakt", exact=True)).to_be_visible()  # the list reloaded

    _import(page, tmp_path / "hinweise.zpl")
    dialog = page.get_by_role("dialog", name="Import a label file")
    expect(dialog.get_by_role("status")).to_contain_text("0 imported exactly")
    expect(dialog.get_by_text(re.compile(r"^Imported with [1-9]\d* warnings?$"))).to_be_visible()
    warnings = dialog.get_by_role("table")
    expect(warnings.get_by_role("row", name=re.compile(r"line 4 .*\^BK"))).to_be_visible()
    expect(
        warnings.get_by_role("row", name=re.compile("line 5 .*error correction level H"))
    ).to_be_visible()
    notes = dialog.get_by_role("group").filter(has_text=re.compile(r"^Notes \(1\)"))
    expect(notes.get_by_role("row", name=re.compile(r"line 6 .*\^PQ"))).to_be_hidden()
    notes.get_by_text("Notes (1)").click()  # settings and mappings by design, folded away
    expect(notes.get_by_role("row", name=re.compile(r"line 6 .*\^PQ"))).to_be_visible()
    _screenshot(page, "import-result.png")

    # The answer names the labels it created; the link opens the new draft.
    label_id = next(
        item["id"]
        for item in admin.get("/labels", params={"limit": 200}).json()["items"]
        if item["name"] == "hinweise"
    )
    dialog.get_by_role("link", name="hinweise").click()
    expect(page).to_have_url(re.compile(f"/labels/{label_id}$"))
    expect(page.get_by_role("heading", level=1, name="hinweise")).to_be_visible()


def test_a_refused_file_shows_its_problem_and_creates_nothing(
    console: Session, server: DevServer, admin: Api, designer: dict[str, Any], tmp_path: Path
) -> None:
    page = console.page
    browsing.sign_in(page, server.url, designer["username"], PASSWORD)
    before = len(admin.get("/labels", params={"limit": 200}).json()["items"])
    (tmp_path / "notes.txt").write_text("hello, not a label")
    _import(page, tmp_path / "notes.txt")
    dialog = page.get_by_role("dialog", name="Import a label file")
    expect(dialog.get_by_role("alert")).to_contain_text("Code: import.unreadable")
    assert len(admin.get("/labels", params={"limit": 200}).json()["items"]) == before
