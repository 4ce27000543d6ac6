"""The browser console in a real browser (Debian's chromium under Playwright) against a real
service, Runner and printer simulator: sign in, a label from a Vorlage and its preview, an agent's
draft approved after its visual diff, prints that come out of the simulator, a deployment stage
approved, and the cookie session's CSRF defence seen from pages of this and another origin."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from etikett_runner.printer_sim import PrinterSimulator
from playwright.sync_api import Browser, Page, expect

from e2e.prints import PrintSite
from e2e.runners import eventually
from support.browser import TABLET, Session, console_session, running_browser
from support.client import PASSWORD, Api, unique
from support.server import DevServer

pytestmark = pytest.mark.console


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """One chromium for all console tests (each opens a context of its own). Closed with this
    module: Playwright's sync API holds an event loop on the main thread while it runs."""
    with running_browser() as running:
        yield running


@pytest.fixture(scope="module")
def person(admin: Api) -> dict[str, Any]:
    """A person who designs, operates and approves (not an admin)."""
    return admin.create_user(["designer", "operator", "approver"], username=unique("ines"))


@pytest.fixture
def console(browser: Browser, server: DevServer) -> Iterator[Session]:
    with console_session(browser) as session:
        yield session
        assert not session.errors, session.errors
        foreign = [
            url
            for url in session.requests
            if not url.startswith((server.url + "/", "data:", "blob:"))
        ]
        assert not foreign, f"the console asked other hosts: {foreign}"


def sign_in(page: Page, server: DevServer, username: str) -> None:
    page.goto(server.url + "/")
    expect(page).to_have_url(re.compile(r"/console/signin"))
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", level=1, name="Labels")).to_be_visible()


def shelf_label(api: Api, name: str) -> dict[str, Any]:
    created = api.post("/labels/from-vorlage", json={"vorlageId": "shelf-label", "name": name})
    assert created.status_code == 201, created.text
    return dict(created.json())


def test_sign_in_create_a_label_from_a_vorlage_and_see_its_preview(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    page = console.page
    sign_in(page, server, person["username"])
    page.get_by_role("button", name="New label").click()
    dialog = page.get_by_role("dialog", name="New label")
    dialog.get_by_role("textbox", name="Name").fill("Regal Milch")
    dialog.get_by_role("radio", name=re.compile("^Shelf-edge label")).check()
    dialog.get_by_role("button", name="Create label").click()

    expect(page.get_by_role("heading", level=1, name="Regal Milch")).to_be_visible()
    label_id = page.url.rsplit("/", 1)[1]
    assert label_id.startswith("lbl_")
    label = admin.get(f"/labels/{label_id}").json()
    assert label["vorlage_id"] == "shelf-label" and label["latest_version"] == 1

    picture = page.get_by_role("img", name=re.compile("^Preview of version 1"))
    expect(picture).to_be_visible()
    dots = admin.post(f"/labels/{label_id}/preview", json={}).headers["x-label-dots"]
    natural = picture.evaluate("img => `${img.naturalWidth}x${img.naturalHeight}`")
    assert natural == dots  # the very raster of the API, not a picture of it

    # The preview follows the form's variables.
    before = picture.get_attribute("src")
    page.get_by_label(re.compile("^Product name")).fill("Apfelsaft naturtrüb")
    expect(page.get_by_role("img", name=re.compile("^Preview of version 1"))).not_to_have_attribute(
        "src", before or ""
    )


def test_an_agents_draft_is_approved_after_its_visual_diff(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    human = admin.as_token(admin.login(person["username"]))
    label = shelf_label(human, unique("Agent draft"))
    agent_token = admin.service_token("designer")
    agent = admin.as_token(agent_token["token"])
    patched = agent.request(
        "PATCH",
        f"/labels/{label['id']}/document",
        json={
            "operations": [{"op": "replace", "path": "/objects/0/x_mm", "value": 9}],
            "comment": "Move the product name right",
        },
    )
    assert patched.status_code == 200, patched.text
    # The policy: an agent cannot approve what an agent wrote.
    agent_approver = admin.as_token(admin.service_token("approver")["token"])
    refused = agent_approver.post(
        f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"}
    )
    assert refused.json()["code"] == "policy.human_required"

    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/labels/{label['id']}")
    page.get_by_role("tab", name="Compare versions").click()
    summary = page.locator(".diff-summary")
    expect(summary).to_have_text(re.compile(r"^[\d,]+ dots removed, [\d,]+ dots added"))
    found = re.match(r"(\d[\d,]*) dots removed, (\d[\d,]*) dots added", summary.inner_text())
    assert found
    removed, added = (int(n.replace(",", "")) for n in found.groups())
    assert removed > 0 and added > 0
    expect(page.get_by_role("img", name=re.compile("^Changed dots from v1 to v2"))).to_be_visible()
    expect(page.get_by_text(f"v2 — agent {agent_token['subject']}")).to_be_visible()
    expect(page.get_by_text("object product_name changed: x_mm")).to_be_visible()

    page.get_by_role("button", name="Approve v2 and release it").click()
    dialog = page.get_by_role("dialog", name="Approve and release version 2")
    dialog.get_by_label("Comment").fill("Seen the diff")
    dialog.get_by_role("button", name="Approve and release").click()
    expect(page.get_by_text("Version 2 is released.")).to_be_visible()

    assert admin.get(f"/labels/{label['id']}").json()["released_version"] == 2
    entry = admin.get(f"/labels/{label['id']}/versions/2").json()
    assert entry["status"] == "approved" and entry["status_changed_by"] == person["username"]
    audit = admin.get(
        "/audit-log", params={"target": label["id"], "operation": "postLabelStatus"}
    ).json()["items"]
    assert next((e["actor"], e["subject"], e["outcome"]) for e in audit) == (
        "human",
        person["username"],
        "success",
    )


@pytest.fixture(scope="module")
def released_shelf_label(admin: Api, person: dict[str, Any]) -> dict[str, Any]:
    human = admin.as_token(admin.login(person["username"]))
    label = shelf_label(human, unique("Regal"))
    approved = human.post(
        f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"}
    )
    assert approved.status_code == 200, approved.text
    return label


def test_print_to_the_printer_simulator_and_see_the_outcome(
    console: Session,
    server: DevServer,
    admin: Api,
    person: dict[str, Any],
    print_site: PrintSite,
    simulator: PrinterSimulator,
    released_shelf_label: dict[str, Any],
) -> None:
    printer = next(
        p for p in admin.get("/printers").json()["items"] if p["name"] == print_site.printer
    )
    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/labels/{released_shelf_label['id']}/print")
    expect(page.get_by_role("heading", level=1)).to_have_text(
        f"Print {released_shelf_label['name']}"
    )

    printed, odometer = len(simulator.printed), simulator.odometer
    page.get_by_label("Printer").select_option(printer["name"])
    page.get_by_label(re.compile("^Product name")).fill("Hafermilch")
    page.get_by_role("button", name="Print", exact=True).click()
    job = page.locator(".job")
    expect(job).to_have_attribute("data-final", "confirmed", timeout=60_000)
    expect(job.get_by_role("log", name="Job messages").locator("li").first).to_be_visible()
    expect(job.get_by_text(re.compile(r"^1 of 1 labels at the printer"))).to_be_visible()
    assert len(simulator.printed) == printed + 1 and simulator.odometer == odometer + 1

    # A data stream from a CSV file, with its progress.
    page.get_by_label("A data file (CSV): one label per row").check()
    rows = ["product_name;price;net_quantity;gtin;article_number"] + [
        f"Milch {n};1.{n}9;1000;4012345000023;A-{n}" for n in range(3)
    ]
    page.get_by_label("Data file", exact=True).set_input_files(
        {"name": "regal.csv", "mimeType": "text/csv", "buffer": "\n".join(rows).encode()}
    )
    expect(page.get_by_text(re.compile(r"regal\.csv .*: 3 records"))).to_be_visible()
    page.get_by_role("button", name="Print", exact=True).click()
    job = page.locator(".job")
    expect(job).to_have_attribute("data-final", "confirmed", timeout=60_000)
    expect(job.get_by_text(re.compile(r"^3 of 3 labels at the printer"))).to_be_visible()
    eventually(lambda: len(simulator.printed) == printed + 4, 10)
    assert simulator.odometer == odometer + 4


def test_approve_a_deployment_stage(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    human = admin.as_token(admin.login(person["username"]))
    group = admin.post("/runner-groups", json={"name": unique("Halle")}).json()
    flow = admin.post(
        "/flows",
        json={
            "name": unique("Inbox"),
            "document": {
                "nodes": [
                    {"id": "tick", "type": "trigger.schedule", "every_s": 60, "wires": ["say"]},
                    {"id": "say", "type": "action.log", "message": "'tick'"},
                ]
            },
        },
    ).json()
    deployment = human.post(
        "/deployments",
        json={"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [group["id"]]}]},
    ).json()
    assert deployment["stages"][0]["status"] == "awaiting_approval"

    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/deployments/{deployment['id']}")
    stage = page.get_by_role("article", name="Stage 1")
    expect(stage.locator(".badge").first).to_have_text("awaiting approval")
    stage.get_by_role("button", name="Approve stage 1").click()
    page.get_by_role("dialog").get_by_role("button", name="Approve stage 1").click()
    expect(stage.locator(".badge").first).to_have_text("active")

    answer = admin.get(f"/deployments/{deployment['id']}").json()
    assert answer["status"] == "active"
    assert answer["stages"][0]["approved_by"] == person["username"]


class _ForeignSite(BaseHTTPRequestHandler):
    """A page of another origin (another port of the same host: the same site, so the browser
    sends the SameSite=Strict cookie along) that posts to the API as a form would."""

    target = ""

    def do_GET(self) -> None:
        page = f"""<!doctype html><html><body>
<form id="f" method="POST" enctype="text/plain"
 action="{self.target}/api/v1/labels/from-dimensions">
<input name='{{"name": "forged", "width_mm": 50, "height_mm": 30, "x": "' value='"}}'>
</form><script>document.getElementById("f").submit()</script></body></html>"""
        body = page.encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def test_cookie_posts_without_the_header_or_from_another_origin_are_refused(
    browser: Browser, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    with console_session(browser) as session:
        page = session.page
        sign_in(page, server, person["username"])
        post = """async ([name, header]) => {
            const headers = {"content-type": "application/json"};
            if (header) headers["X-Etikett-CSRF"] = "1";
            const response = await fetch("/api/v1/labels/from-dimensions", {
                method: "POST", headers, credentials: "same-origin",
                body: JSON.stringify({name, width_mm: 50, height_mm: 30})});
            return [response.status, (await response.json()).code || null];
        }"""
        assert page.evaluate(post, ["headerless", False]) == [403, "auth.csrf_required"]
        assert page.evaluate(post, ["with-header", True])[0] == 201

        handler = type("Foreign", (_ForeignSite,), {"target": server.url})
        foreign = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=foreign.serve_forever, daemon=True)
        thread.start()
        try:
            page.goto(f"http://127.0.0.1:{foreign.server_address[1]}/")
            expect(page.locator("body")).to_contain_text("auth.origin_refused")
        finally:
            foreign.shutdown()
            foreign.server_close()
        assert not session.errors, session.errors
    names = {label["name"] for label in admin.get("/labels", params={"limit": 200}).json()["items"]}
    assert "with-header" in names
    assert not {"headerless", "forged"} & names
    assert not any(name.startswith('{"name": "forged"') for name in names)


def test_keyboard_alone_and_accessible_names(
    console: Session, server: DevServer, person: dict[str, Any], released_shelf_label: Any
) -> None:
    page = console.page
    sign_in(page, server, person["username"])
    # Tab to "New label", open the dialog with Enter, close it with Escape: focus comes back.
    for _ in range(40):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent") == "New label":
            break
    else:
        pytest.fail("Tab never reached the New label button")
    page.keyboard.press("Enter")
    expect(page.get_by_role("dialog", name="New label")).to_be_visible()
    expect(page.get_by_role("textbox", name="Name")).to_be_focused()
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    assert page.evaluate("document.activeElement.textContent") == "New label"

    unnamed = """() => [...document.querySelectorAll(
        'button, a[href], input, select, textarea, [role=tab], [role=button], [role=switch]')]
        .filter(el => el.offsetParent !== null || el.getClientRects().length)
        .filter(el => !(el.getAttribute('aria-label') || el.getAttribute('aria-labelledby')
            || (el.labels && el.labels.length) || el.textContent.trim()
            || el.getAttribute('title')))
        .map(el => el.outerHTML.slice(0, 120))"""
    for path in [
        "labels",
        f"labels/{released_shelf_label['id']}",
        f"labels/{released_shelf_label['id']}/print",
        "flows",
        "deployments",
        "runners",
        "archive",
        "audit",
        "account",
    ]:
        page.goto(f"{server.url}/console/{path}")
        expect(page.get_by_role("heading", level=1)).to_be_visible()
        page.wait_for_load_state("networkidle")
        assert page.evaluate(unnamed) == [], path


def test_tablet_width_needs_no_sideways_scrolling(
    browser: Browser, server: DevServer, person: dict[str, Any], released_shelf_label: Any
) -> None:
    with console_session(browser, TABLET) as session:
        page = session.page
        sign_in(page, server, person["username"])
        for path in ["labels", f"labels/{released_shelf_label['id']}", "deployments", "audit"]:
            page.goto(f"{server.url}/console/{path}")
            expect(page.get_by_role("heading", level=1)).to_be_visible()
            page.wait_for_load_state("networkidle")
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert overflow <= 0, (path, overflow)
        assert not session.errors
