"""Debian's chromium under Playwright for the console tests: one browser per test session, a
fresh context (cookies, storage) per test, and every request the page makes recorded."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.sync_api import Browser, BrowserContext, Page, Playwright, sync_playwright

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
    """A browser context on the console: its page, every URL it requested, and the page's
    script errors (uncaught exceptions)."""

    context: BrowserContext
    page: Page
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@contextmanager
def console_session(browser: Browser, viewport: dict[str, int] | None = None) -> Iterator[Session]:
    context = browser.new_context(viewport=viewport or LAPTOP)
    context.set_default_timeout(20_000)
    page = context.new_page()
    session = Session(context, page)
    context.on("request", lambda request: session.requests.append(request.url))
    page.on("pageerror", lambda error: session.errors.append(str(error)))
    try:
        yield session
    finally:
        context.close()
