"""Debian's chromium under Playwright for the console tests: one browser per test module, a
fresh context (cookies, storage) per test, and every request the page makes recorded."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Playwright,
    expect,
    sync_playwright,
)

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
LAPTOP = {"width": 1366, "height": 900}
TABLET = {"width": 820, "height": 1180}
# How long actions, navigations and `expect(...)` assertions wait for the page: expect's own
# default is 5 s, which a loaded machine (the service, the Runner and chromium on two cores)
# can pass before a status shows. They return as soon as the page is right.
TIMEOUT_MS = 30_000
expect.set_options(timeout=TIMEOUT_MS)


def launch(playwright: Playwright) -> Browser:
    if not CHROMIUM.exists():
        raise RuntimeError(f"{CHROMIUM} is missing: `make test` installs Debian's chromium")
    return playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)


@contextmanager
def running_browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        browser = launch(playwright)
        try:
            yield browser
        finally:
            browser.close()


@dataclass
class Session:
    """A browser context on the console: its page, every URL it requested, the page's script
    errors (uncaught exceptions), and the errors the browser wrote to its console (an invalid
    `pattern`, a refused script…), but for the failed requests of answers the API meant."""

    context: BrowserContext
    page: Page
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def assert_clean(self, origin: str, *, allowed: tuple[str, ...] = ()) -> None:
        """No script error, and no request to another host than `origin` (or `allowed`)."""
        assert not self.errors, self.errors
        own = (origin + "/", "data:", "blob:", *allowed)
        foreign = [url for url in self.requests if not url.startswith(own)]
        assert not foreign, f"the console asked other hosts: {foreign}"


def _console_error(session: Session, message: ConsoleMessage) -> None:
    if message.type == "error" and not message.text.startswith("Failed to load resource"):
        session.errors.append(f"console: {message.text}")


@contextmanager
def console_session(browser: Browser, viewport: dict[str, int] | None = None) -> Iterator[Session]:
    context = browser.new_context(viewport=viewport or LAPTOP)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    session = Session(context, page)
    context.on("request", lambda request: session.requests.append(request.url))
    page.on("pageerror", lambda error: session.errors.append(str(error)))
    page.on("console", lambda message: _console_error(session, message))
    try:
        yield session
    finally:
        context.close()


def sign_in(page: Page, origin: str, username: str, password: str) -> None:
    """Sign in through the console's own page; answers once the labels page shows."""
    page.goto(origin + "/")
    expect(page).to_have_url(re.compile(r"/console/signin"))
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1, name="Labels")).to_be_visible()
