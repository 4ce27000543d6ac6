"""The API reference the service serves itself (console → API reference): the vendored Swagger UI
reads the service's own /api/v1/openapi.json on the console's origin, lists every operation,
and breaks no rule of the console's Content-Security-Policy (a refused script or style would be
an error in the browser's console)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from support import a11y
from support.browser import console_session, sign_in
from support.client import PASSWORD, Api
from support.server import DevServer

pytestmark = pytest.mark.console

SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "console"


def test_the_reference_lists_every_operation_within_the_csp(
    browser: Browser, server: DevServer, admin: Api, tmp_path: Path
) -> None:
    operations = {
        operation["operationId"]
        for item in admin.get("/openapi.json").json()["paths"].values()
        for operation in item.values()
    }
    with console_session(browser, viewport={"width": 1280, "height": 800}) as session:
        page = session.page
        sign_in(page, server.url, "admin", PASSWORD)
        page.get_by_role("link", name="API reference").click()
        expect(page.get_by_role("heading", level=1, name="API reference")).to_be_visible()
        # Swagger UI drew the document in groups, folded; unfolded one at a time with the
        # keyboard, each holds one block per operation, naming its operationId. (All fifteen
        # open at once, Swagger UI 5.35 redraws the page with the first two only: a reader opens
        # the group they need.)
        groups = page.locator(".opblock-tag-section .opblock-tag button.expand-operation")
        expect(groups.first).to_be_visible()
        # The document's own title sits under the page's one top heading.
        expect(page.locator("h1.title")).to_have_attribute("aria-level", "2")
        assert a11y.top_headings(page) == ["API reference"]
        shown: set[str] = set()
        for index in range(groups.count()):
            group = groups.nth(index)
            group.focus()
            page.keyboard.press("Enter")
            expect(group).to_have_attribute("aria-expanded", "true")
            section = page.locator(".opblock-tag-section").nth(index)
            names = section.locator(".opblock-summary-operation-id").all_inner_texts()
            assert len(names) == section.locator(".opblock").count() and names, index
            shown.update(names)
            if "postPrint" not in names:  # Printing stays open: postPrint is opened below
                group.focus()
                page.keyboard.press("Enter")
                expect(group).to_have_attribute("aria-expanded", "false")
        assert shown == operations
        # An operation opens with its parameters and answers, keyboard first.
        page.screenshot(path=str(tmp_path / "reference.png"))
        name = page.locator(".opblock-summary-operation-id", has_text=re.compile("^postPrint$"))
        block = page.locator(".opblock").filter(has=name)
        block.locator(".opblock-summary-control").focus()
        page.keyboard.press("Enter")
        expect(block.locator(".responses-wrapper")).to_be_visible()
        # Only this origin was asked (no validator, no fonts from elsewhere), and nothing was
        # refused: a CSP violation is an error in the browser's console.
        session.assert_clean(server.url)
        assert any(url.endswith("/api/v1/openapi.json") for url in session.requests)
