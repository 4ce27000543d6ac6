"""The browser console in a real browser (Debian's chromium under Playwright) against a real
service, Runner and printer simulator, as people use it: the first setup, signing in and out,
one's own password; a label from a Vorlage and its preview, an agent's draft approved after its
visual diff; prints that come out of the simulator, printed again from the archive; a flow's dry
run and its trace; a deployment stage approved and rolled back; a Runner's enrollment approved,
an installer downloaded; credentials, API tokens and webhooks with their deliveries; the policy
switch; the audit log by who acted; and the cookie session's CSRF defence seen from pages of this
and another origin. Every page's accessibility: test_console_pages.py."""

from __future__ import annotations

import json
import re
import threading
import zipfile
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest
from etikett_runner.printer_sim import PrinterSimulator
from integration.webhooks.receiver import Receiver
from playwright.sync_api import Browser, Page, expect
from standardwebhooks import Webhook

from e2e.prints import PrintSite, wait_final
from e2e.runners import eventually
from support import browser as browsing
from support.browser import Session, console_session
from support.client import PASSWORD, Api, unique
from support.runner_site import FakeSite
from support.server import DevServer

pytestmark = pytest.mark.console


def set_up_in_the_console(page: Page, origin: str, username: str, password: str) -> None:
    """A fresh service's first setup, as its first admin does it in the console: a username the
    API would refuse, a password too short and a repetition that differs are refused before
    anything is sent."""
    page.goto(origin + "/")
    expect(page.get_by_role("heading", level=1, name="First setup")).to_be_visible()
    page.get_by_label("Username").fill(f"{username} one")  # the API's username rule: no spaces
    page.get_by_label("Password", exact=True).fill("kurz")
    page.get_by_label("Repeat the password").fill("kurz")
    create = page.get_by_role("button", name="Create administrator")
    create.click()
    expect(page.get_by_label("Username")).to_have_attribute("aria-invalid", "true")
    expect(page.get_by_label("Password", exact=True)).to_have_attribute("aria-invalid", "true")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_label("Repeat the password").fill(password + "!")
    create.click()
    expect(page.get_by_text("The passwords differ.")).to_be_visible()
    assert Api(origin).get("/auth/setup").json()["setup_required"] is True

    page.get_by_label("Repeat the password").fill(password)
    create.click()
    expect(page.get_by_role("heading", level=1, name="Labels")).to_be_visible()
    expect(page.get_by_role("link", name=username, exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Administration")).to_be_visible()


@pytest.fixture(scope="module")
def admin(browser: Browser, server: DevServer) -> Api:
    """This module's service gets its first admin through the console's first setup."""
    with console_session(browser) as session:
        set_up_in_the_console(session.page, server.url, "admin", PASSWORD)
        session.assert_clean(server.url)
    anonymous = Api(server.url)
    return anonymous.as_token(anonymous.login("admin"))


@pytest.fixture(scope="module")
def person(admin: Api) -> dict[str, Any]:
    """A person who designs, operates and approves (not an admin)."""
    return admin.create_user(["designer", "operator", "approver"], username=unique("ines"))


@pytest.fixture
def console(browser: Browser, server: DevServer) -> Iterator[Session]:
    with console_session(browser) as session:
        yield session
        session.assert_clean(server.url)


def sign_in(page: Page, server: DevServer, username: str, password: str = PASSWORD) -> None:
    browsing.sign_in(page, server.url, username, password)


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

    # A new label opens in the designer; its own page shows the preview with the form.
    expect(page.get_by_role("heading", level=1, name="Regal Milch")).to_be_visible()
    found = re.search(r"/labels/(lbl_[^/]+)/design$", page.url)
    assert found, page.url
    label_id = found.group(1)
    label = admin.get(f"/labels/{label_id}").json()
    assert label["vorlage_id"] == "shelf-label" and label["latest_version"] == 1
    page.get_by_role("link", name="Regal Milch", exact=True).click()
    expect(page.get_by_role("heading", level=1, name="Regal Milch")).to_be_visible()

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


def released(api: Api, name: str) -> dict[str, Any]:
    """A shelf label whose version 1 `api` approved."""
    label = shelf_label(api, name)
    approved = api.post(f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"})
    assert approved.status_code == 200, approved.text
    return label


@pytest.fixture(scope="module")
def released_shelf_label(admin: Api, person: dict[str, Any]) -> dict[str, Any]:
    return released(admin.as_token(admin.login(person["username"])), unique("Regal"))


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


SHELF = {
    "product_name": "Archivmilch",
    "price": "1.19",
    "net_quantity": "1000",
    "gtin": "4012345000023",
    "article_number": "A-9",
}


def printed_once(admin: Api, person: dict[str, Any], label: dict[str, Any], printer: str) -> str:
    """A job printed (and confirmed) from the API by `person`; its id."""
    human = admin.as_token(admin.login(person["username"]))
    accepted = human.post(
        "/print", json={"label_id": label["id"], "printer": printer, "variables": SHELF}
    )
    assert accepted.status_code == 202, accepted.text
    job_id = str(accepted.json()["job_id"])
    assert wait_final(admin, job_id)["status"] == "confirmed"
    return job_id


def test_print_again_from_the_archive(
    console: Session,
    server: DevServer,
    admin: Api,
    person: dict[str, Any],
    print_site: PrintSite,
    simulator: PrinterSimulator,
    released_shelf_label: dict[str, Any],
) -> None:
    first = printed_once(admin, person, released_shelf_label, print_site.printer)
    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/archive")
    page.get_by_label("Label").select_option(label=released_shelf_label["name"])
    page.get_by_label("Outcome").select_option("failed")
    expect(page.get_by_text("Nothing printed matches.")).to_be_visible()
    page.get_by_label("Outcome").select_option("confirmed")
    row = page.get_by_role("row").filter(has_text=first)
    expect(row).to_contain_text("confirmed")

    odometer = simulator.odometer
    row.get_by_role("button", name=re.compile("^Print again")).click()
    dialog = page.get_by_role("dialog", name="Print again")
    dialog.get_by_label("Copies").fill("2")
    dialog.get_by_role("button", name="Print again").click()
    expect(page).to_have_url(re.compile(r"/console/jobs/job_"))
    expect(page.locator(".job")).to_have_attribute("data-final", "confirmed", timeout=60_000)
    again = page.url.rsplit("/", 1)[1]
    eventually(lambda: simulator.odometer == odometer + 2, 10)

    def entries(job_id: str) -> list[tuple[str, int, dict[str, Any]]]:
        items = admin.get("/print-archive", params={"job_id": job_id}).json()["items"]
        return [(e["label_id"], e["copies"], e["variables"]) for e in items]

    assert entries(again) == [(label, 2, variables) for label, _, variables in entries(first)]


def test_a_webhook_receiver_and_its_deliveries(
    console: Session,
    server: DevServer,
    admin: Api,
    person: dict[str, Any],
    print_site: PrintSite,
    released_shelf_label: dict[str, Any],
) -> None:
    page = console.page
    sign_in(page, server, "admin")
    page.goto(f"{server.url}/console/admin/webhooks")
    with Receiver() as receiver:
        page.get_by_label("URL").fill(receiver.url)
        page.get_by_label("print.confirmed").check()
        page.get_by_role("button", name="Add receiver").click()
        shown = page.get_by_role("dialog", name="Signing secret")
        secret = shown.get_by_role("textbox", name="Secret").input_value()
        shown.get_by_role("button", name="I have stored it").click()
        hook = next(w for w in admin.get("/webhooks").json()["items"] if w["url"] == receiver.url)
        assert hook["events"] == ["print.confirmed"]

        printed_once(admin, person, released_shelf_label, print_site.printer)
        sent = eventually(lambda: receiver.requests, 30)[0]
        # The secret shown once is the one the deliveries are signed with.
        event = Webhook(secret).verify(sent.body, sent.headers)
        assert event["type"] == "print.confirmed"
        eventually(lambda: admin.get(f"/webhooks/{hook['id']}/deliveries").json()["items"], 30)

        panel = page.locator(".panel").filter(has_text=receiver.url)
        panel.get_by_text("Deliveries").click()
        delivery = panel.locator("tbody tr").first
        expect(delivery).to_contain_text("print.confirmed")
        expect(delivery).to_contain_text("delivered")
        expect(delivery.get_by_role("cell").nth(3)).to_have_text("200")

        panel.get_by_role("button", name=f"Delete the receiver {receiver.url}").click()
        page.get_by_role("dialog").get_by_role("button", name="Delete").click()
        expect(page.locator(".panel").filter(has_text=receiver.url)).to_have_count(0)
    assert hook["id"] not in {w["id"] for w in admin.get("/webhooks").json()["items"]}


def test_the_print_form_checks_its_cel_validation(
    console: Session,
    server: DevServer,
    admin: Api,
    person: dict[str, Any],
    print_site: PrintSite,
    simulator: PrinterSimulator,
) -> None:
    human = admin.as_token(admin.login(person["username"]))
    label = released(human, unique("Regal"))
    authored = human.request(
        "PATCH",
        f"/labels/{label['id']}/form",
        json={
            "operations": [
                {"op": "add", "path": "/fields/2/validation", "value": "value < 100.0"},
                {"op": "add", "path": "/fields/2/validation_message", "value": "Under 100."},
            ]
        },
    )
    assert authored.status_code == 200, authored.text
    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/labels/{label['id']}/print")
    page.get_by_label("Printer").select_option(print_site.printer)
    price = page.get_by_label(re.compile("^Shelf price"))
    price.fill("150")
    page.get_by_role("button", name="Print", exact=True).click()
    expect(page.get_by_text("Under 100.")).to_be_visible()
    expect(price).to_have_attribute("aria-invalid", "true")
    assert admin.get("/print-archive", params={"label_id": label["id"]}).json()["items"] == []

    odometer = simulator.odometer
    price.fill("2.49")
    page.get_by_role("button", name="Print", exact=True).click()
    expect(page.locator(".job")).to_have_attribute("data-final", "confirmed", timeout=60_000)
    eventually(lambda: simulator.odometer == odometer + 1, 10)
    entry = admin.get("/print-archive", params={"label_id": label["id"]}).json()["items"][0]
    assert entry["variables"]["price"] == 2.49


def test_discover_and_adopt_a_printer_and_set_context_on_a_runner(
    console: Session,
    server: DevServer,
    admin: Api,
    person: dict[str, Any],
    print_site: PrintSite,
    simulator: PrinterSimulator,
) -> None:
    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/runners/{print_site.runner_id}")
    expect(page.get_by_role("region", name="Status").locator(".badge")).to_have_text("online")

    address = f"127.0.0.1:{simulator.port}"
    discovery = page.get_by_role("region", name="Discover printers")
    discovery.get_by_label("Addresses to search").fill(address)
    discovery.get_by_role("button", name="Search").click()
    expect(discovery.locator(".job")).to_have_attribute("data-final", "succeeded", timeout=60_000)
    finding = discovery.get_by_role("row").filter(has_text=address)
    expect(finding).to_contain_text("ZT411")
    finding.get_by_role("button", name=f"Adopt {address}").click()
    name = unique("Zebra Rampe")
    adopt = page.get_by_role("dialog", name=f"Adopt the printer at {address}")
    adopt.get_by_label("Printer name").fill(name)
    adopt.get_by_role("button", name="Adopt printer").click()
    # The Runner's printers show it at once.
    printers = page.get_by_role("region", name="Printers")
    expect(printers.get_by_role("row").filter(has_text=name)).to_contain_text(f"tcp://{address}")
    adopted = next(p for p in admin.get("/printers").json()["items"] if p["name"] == name)
    assert (adopted["runner_id"], adopted["uri"]) == (print_site.runner_id, f"tcp://{address}")

    context = page.get_by_role("region", name=re.compile("^Context parameters"))
    context.get_by_label("Parameter name").fill("line")
    context.get_by_label("Value (JSON, or plain text)").fill("3")
    context.get_by_role("button", name="Set parameter").click()
    expect(context.get_by_role("row").filter(has_text="line")).to_contain_text("3")
    items = admin.get(f"/runners/{print_site.runner_id}/context").json()["items"]
    assert {(p["name"], p["value"]) for p in items} == {("line", 3)}
    context.get_by_role("button", name="Remove line").click()
    expect(context.get_by_text("No context parameters at this Runner.")).to_be_visible()
    admin.delete(f"/printers/{adopted['id']}")


def test_archive_restore_duplicate_and_retire_a_label(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    human = admin.as_token(admin.login(person["username"]))
    label = released(human, unique("Regal"))
    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/labels/{label['id']}")
    page.get_by_role("button", name="Archive").click()
    expect(page.get_by_text("Label archived.")).to_be_visible()
    expect(page.locator(".summary")).to_contain_text("archived")
    assert admin.get(f"/labels/{label['id']}").json()["archived"] is True
    page.get_by_role("button", name="Restore from archive").click()
    expect(page.get_by_text("Label restored.")).to_be_visible()
    expect(page.get_by_role("button", name="Archive", exact=True)).to_be_visible()
    assert admin.get(f"/labels/{label['id']}").json()["archived"] is False

    page.get_by_role("tab", name="Versions (1)").click()
    page.get_by_role("button", name="Retire v1").click()
    page.get_by_role("dialog", name="Retire version 1").get_by_role("button", name="Retire").click()
    expect(page.get_by_text("Version 1 is retired.")).to_be_visible()
    assert admin.get(f"/labels/{label['id']}/versions/1").json()["status"] == "retired"

    page.get_by_role("button", name="Duplicate").click()
    copy_name = unique("Regal Kopie")
    dialog = page.get_by_role("dialog", name="Duplicate label")
    dialog.get_by_label("Name of the copy").fill(copy_name)
    dialog.get_by_role("button", name="Duplicate").click()
    expect(page.get_by_role("heading", level=1, name=copy_name)).to_be_visible()
    copy = admin.get(f"/labels/{page.url.rsplit('/', 1)[1]}").json()
    assert (copy["name"], copy["copied_from"]) == (copy_name, f"{label['id']}@1")
    # The copy leads back to its source (the label's page, not the version's id).
    page.get_by_role("tab", name="Details").click()
    page.get_by_role("link", name=f"{label['id']}, version 1").click()
    expect(page.get_by_role("heading", level=1, name=label["name"])).to_be_visible()


TICK = {
    "nodes": [
        {"id": "tick", "type": "trigger.schedule", "every_s": 60, "wires": ["say"]},
        {"id": "say", "type": "action.log", "message": "'tick'"},
    ]
}


def deployment_awaiting_approval(admin: Api, person: dict[str, Any]) -> dict[str, Any]:
    """A flow's first deployment, to a group without Runners, created by `person`."""
    human = admin.as_token(admin.login(person["username"]))
    group = admin.post("/runner-groups", json={"name": unique("Halle")}).json()
    flow = admin.post("/flows", json={"name": unique("Inbox"), "document": TICK}).json()
    deployment = human.post(
        "/deployments",
        json={"flow_id": flow["id"], "version": 1, "stages": [{"group_ids": [group["id"]]}]},
    ).json()
    assert deployment["stages"][0]["status"] == "awaiting_approval", deployment
    return dict(deployment)


def test_approve_a_deployment_stage(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    deployment = deployment_awaiting_approval(admin, person)
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


def test_deploy_a_flow_from_its_page(
    console: Session,
    server: DevServer,
    admin: Api,
    person: dict[str, Any],
    print_site: PrintSite,
) -> None:
    group = admin.post("/runner-groups", json={"name": unique("Halle")}).json()
    flow = admin.post("/flows", json={"name": unique("Inbox"), "document": TICK}).json()
    printers = admin.get("/printers").json()["items"]
    printer = next(p for p in printers if p["name"] == print_site.printer)
    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/flows/{flow['id']}")
    page.get_by_role("link", name="Deploy…").click()
    dialog = page.get_by_role("dialog", name="New deployment")
    expect(dialog.get_by_label("Flow")).to_have_value(flow["id"])
    dialog.get_by_role("group", name="Stage 1: Runner groups").get_by_label(group["name"]).check()
    dialog.get_by_label("Printer", exact=True).select_option(printer["id"])
    # An alias the API would refuse is refused here, before anything is sent.
    dialog.get_by_label("Printer alias").fill("ship-1")
    dialog.get_by_role("button", name="Create deployment").click()
    expect(dialog.get_by_text(re.compile("^Allowed: up to 64 letters"))).to_be_visible()
    dialog.get_by_label("Printer alias").fill("shipping")
    dialog.get_by_role("button", name="Create deployment").click()

    expect(page.get_by_role("heading", level=1)).to_have_text(f"Deployment of {flow['name']} v1")
    stage = page.get_by_role("article", name="Stage 1")
    expect(stage.locator(".badge").first).to_have_text("awaiting approval")
    deployment = admin.get(f"/deployments/{page.url.rsplit('/', 1)[1]}").json()
    assert [s["group_ids"] for s in deployment["stages"]] == [[group["id"]]]
    assert deployment["author"]["subject"] == person["username"]
    aliases = admin.get(f"/deployments/{deployment['id']}/printers").json()["items"]
    assert [(a["alias"], a["printer_id"]) for a in aliases] == [("shipping", printer["id"])]


def test_roll_back_a_deployment(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    deployment = deployment_awaiting_approval(admin, person)
    human = admin.as_token(admin.login(person["username"]))
    approved = human.post(f"/deployments/{deployment['id']}/approval", json={"stage": 0})
    assert approved.json()["status"] == "active", approved.text

    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/deployments/{deployment['id']}")
    summary = page.locator(".summary .badge").first  # the status; the offline policy's follows
    expect(summary).to_have_text("active")
    page.get_by_role("button", name="Roll back").click()
    dialog = page.get_by_role("dialog", name="Roll back this deployment")
    dialog.get_by_label("Comment").fill("Wrong labels in hall 1")
    dialog.get_by_role("button", name="Roll back").click()
    expect(summary).to_have_text("rolled back")
    expect(page.get_by_role("button", name="Roll back")).to_have_count(0)  # nothing left to undo

    assert admin.get(f"/deployments/{deployment['id']}").json()["status"] == "rolled_back"
    entry = admin.get(
        "/audit-log", params={"target": deployment["id"], "operation": "postDeploymentRollback"}
    ).json()["items"][0]
    assert (entry["actor"], entry["subject"], entry["outcome"]) == (
        "human",
        person["username"],
        "success",
    )


def test_a_change_after_approval_is_shown_and_its_stage_approved_again(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    """Issue 23, item 5: the deployment page shows a stage changed since its approval, and,
    while deploymentChangesNeedApproval holds the change back, approves it again."""
    deployment = deployment_awaiting_approval(admin, person)
    human = admin.as_token(admin.login(person["username"]))
    assert (
        human.post(f"/deployments/{deployment['id']}/approval", json={"stage": 0}).status_code
        == 200
    )
    changed = admin.request(
        "PUT", f"/deployments/{deployment['id']}/context/site", json={"value": "Halle 2"}
    )
    assert changed.status_code == 200, changed.text

    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/deployments/{deployment['id']}")
    expect(page.locator(".summary")).to_contain_text("changed since approval")
    stage = page.get_by_role("article", name="Stage 1")
    expect(stage).to_contain_text("Context or printer aliases changed after this approval.")

    policy = "/policies/deploymentChangesNeedApproval"
    assert admin.request("PUT", policy, json={"enabled": True}).status_code == 200
    try:
        # A change made on the page itself is held back and shown as waiting.
        page.get_by_label("Parameter name").fill("site")
        page.get_by_label("Value (JSON, or plain text)").fill("Halle 3")
        page.get_by_role("button", name="Set parameter").click()
        expect(stage).to_contain_text("changes wait for approval")
        stage.get_by_role("button", name="Approve the changes of stage 1").click()
        dialog = page.get_by_role("dialog", name="Approve the changes of stage 1")
        dialog.get_by_label("Comment").fill("Hall 3 is ready")
        dialog.get_by_role("button", name="Approve the changes of stage 1").click()
        expect(stage).not_to_contain_text("changes wait for approval")
        expect(page.locator(".summary")).not_to_contain_text("changed since approval")
        expect(stage.get_by_role("button", name="Approve the changes of stage 1")).to_have_count(0)
    finally:
        admin.request("PUT", policy, json={"enabled": False})
    answer = admin.get(f"/deployments/{deployment['id']}").json()
    assert answer["changed_since_approval"] is False
    assert answer["stages"][0]["approved_by"] == person["username"]


SWITCHED = {
    "nodes": [
        {"id": "inbox", "type": "trigger.folder", "path": "in", "format": "csv", "wires": ["qty"]},
        {"id": "qty", "type": "logic.set", "values": {"n": "int(record.n)"}, "wires": ["route"]},
        {
            "id": "route",
            "type": "logic.switch",
            "cases": [{"when": "record.n > 0", "wires": ["note"]}],
            "otherwise": ["skip"],
        },
        {"id": "note", "type": "action.file", "path": "'out.txt'", "content": "string(record.n)"},
        {"id": "skip", "type": "action.log", "message": "'empty'"},
    ],
    "samples": [{"n": "1"}],
}


def test_dry_run_a_flow_and_read_its_trace(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    flow = admin.post("/flows", json={"name": unique("Versand"), "document": SWITCHED}).json()
    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/flows/{flow['id']}")
    page.get_by_role("tab", name="Dry run").click()
    page.get_by_label("Samples (a JSON array of records)").fill('[{"n": "3"}, {"n": "0"}]')
    page.get_by_role("button", name="Dry run", exact=True).click()
    expect(page.get_by_text(re.compile(r"^Dry run of v1 from inbox: 2 samples\."))).to_be_visible()

    def steps(sample: int) -> list[tuple[str, str]]:
        region = page.get_by_role("region", name=f"Sample {sample}")
        return [
            (item.locator("strong").inner_text(), item.locator(".badge").inner_text())
            for item in region.locator(".trace-step").all()
        ]

    assert steps(1) == [
        ("inbox", "executed"),
        ("qty", "executed"),
        ("route", "executed"),
        ("note", "executed"),
        ("skip", "skipped"),
    ]
    assert [step for step in steps(2) if step[0] in ("note", "skip")] == [
        ("note", "skipped"),
        ("skip", "executed"),
    ]
    effect = page.get_by_role("region", name="Sample 1").locator("tbody tr")
    expect(effect).to_have_count(1)
    expect(effect).to_contain_text("note")
    expect(effect).to_contain_text("out.txt")
    # What a step got and gave, opened from its trace.
    step = page.get_by_role("region", name="Sample 1").locator(".trace-step").nth(1)
    step.get_by_text("Input and output").click()
    expect(step.locator("pre").nth(1)).to_contain_text('"n": 3')
    # A dry run runs nothing on any Runner.
    assert admin.get(f"/flows/{flow['id']}/runs").json()["items"] == []


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


def test_a_flows_graph_marks_what_lint_finds(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    document = {
        "nodes": [
            {"id": "inbox", "type": "trigger.folder", "path": "in", "wires": ["p"]},
            {
                "id": "p",
                "type": "action.print",
                "label": "lbl_01J9Z8Q4X6V2M3N5P7R9S1T3V5",
                "printer": "main",
                "variables": {"name": "record.n"},
            },
        ]
    }
    flow = admin.post("/flows", json={"name": unique("Fehler"), "document": document}).json()
    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/flows/{flow['id']}")
    graph = page.get_by_role("group", name="Flow graph: 2 nodes, 1 wires")
    expect(graph.get_by_role("button", name="p: action.print, has errors")).to_be_visible()
    expect(graph.get_by_role("button", name="inbox: trigger.folder")).to_be_visible()
    page.get_by_role("tab", name="Lint").click()
    finding = page.get_by_role("tabpanel", name="Lint").locator("tbody tr")
    expect(finding).to_have_count(1)
    expect(finding).to_contain_text("flow.label_not_found")
    expect(finding.get_by_role("cell").nth(2)).to_have_text("p")


# --- signing in and out, one's own password ----------------------------------------------------


def whoami_status(page: Page) -> int:
    """What the API answers the page's cookie now."""
    return int(page.evaluate("async () => (await fetch('/api/v1/auth/whoami')).status"))


def test_first_setup_made_the_first_admin(browser: Browser, server: DevServer, admin: Api) -> None:
    """The module's service was set up in the console (the `admin` fixture): it has its admin,
    and no second setup."""
    anonymous = Api(server.url)
    assert anonymous.get("/auth/setup").json()["setup_required"] is False
    assert admin.get("/auth/whoami").json()["roles"] == ["admin"]
    again = anonymous.post("/auth/setup", json={"username": "zweite", "password": PASSWORD})
    assert (again.status_code, again.json()["code"]) == (409, "auth.setup_done")
    entry = admin.get("/audit-log", params={"operation": "postAuthSetup"}).json()["items"][0]
    assert entry["outcome"] == "success"
    with console_session(browser) as session:
        session.page.goto(server.url + "/")
        expect(session.page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()


def test_sign_out_ends_the_session(
    console: Session, server: DevServer, person: dict[str, Any]
) -> None:
    page = console.page
    sign_in(page, server, person["username"])
    cookies = {c["name"]: c["value"] for c in console.context.cookies()}
    assert whoami_status(page) == 200

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()
    assert whoami_status(page) == 401
    # Ended at the service, not only forgotten by this browser.
    kept = httpx.get(f"{server.url}/api/v1/auth/whoami", cookies=cookies)
    assert kept.status_code == 401, kept.text
    page.go_back()
    expect(page).to_have_url(re.compile(r"/console/signin"))


def test_change_your_own_password(console: Session, server: DevServer, admin: Api) -> None:
    user = admin.create_user(["designer"], username=unique("pia"))
    elsewhere = admin.login(user["username"])
    page = console.page
    sign_in(page, server, user["username"])
    page.get_by_role("link", name=user["username"]).click()
    expect(page.get_by_role("heading", level=1, name="Your account")).to_be_visible()
    new = "a longer passphrase now"
    page.get_by_label("Current password").fill("not my password")
    page.get_by_label("New password", exact=True).fill(new)
    page.get_by_label("Repeat the new password").fill(new)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("alert")).to_contain_text("auth.wrong_password")

    page.get_by_label("Current password").fill(PASSWORD)
    page.get_by_label("New password", exact=True).fill(new)
    page.get_by_label("Repeat the new password").fill(new)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_text("Your password is changed.")).to_be_visible()
    expect(page.get_by_label("Current password")).to_have_value("")

    assert whoami_status(page) == 200  # this session stays
    assert admin.get("/auth/whoami", token=elsewhere).status_code == 401  # the others end
    old = admin.post("/auth/login", json={"username": user["username"], "password": PASSWORD})
    assert old.status_code == 401
    admin.login(user["username"], new)


# --- Runners: enrollment approvals and installers -------------------------------------------------


def test_approve_a_runner_enrollment(
    console: Session, server: DevServer, admin: Api, tmp_path: Path
) -> None:
    group = admin.post("/runner-groups", json={"name": unique("Lager")}).json()
    token = admin.post(
        f"/runner-groups/{group['id']}/enrollment-tokens", json={"needs_approval": True}
    ).json()
    site = FakeSite(tmp_path, "waiting-site")
    enrollment = site.enroll(admin, token["token"]).json()
    assert enrollment["status"] == "pending"

    page = console.page
    sign_in(page, server, "admin")
    page.goto(f"{server.url}/console/runners?tab=enrollments")
    row = page.get_by_role("row").filter(has_text=enrollment["id"])
    expect(row).to_contain_text(group["name"])
    row.get_by_role("button", name=re.compile("^Approve site-pc")).click()
    expect(
        page.get_by_text("Enrollment approved; the Runner gets its certificate.")
    ).to_be_visible()
    expect(page.get_by_role("row").filter(has_text=enrollment["id"])).to_have_count(0)

    polled = admin.get(
        f"/runner-enrollments/{enrollment['id']}",
        token="",
        headers={"X-Enrollment-Secret": enrollment["secret"]},
    ).json()
    assert polled["status"] == "approved" and polled["approved_by"] == "admin"
    assert polled["certificate_pem"].startswith("-----BEGIN CERTIFICATE-----")


def test_download_an_installer(
    browser: Browser, server: DevServer, admin: Api, tmp_path: Path
) -> None:
    group = admin.post("/runner-groups", json={"name": unique("Werk")}).json()
    with console_session(browser) as session:
        page = session.page
        sign_in(page, server, "admin")
        page.goto(f"{server.url}/console/runners?tab=groups")
        panel = page.get_by_role("region", name=group["name"])
        panel.get_by_label("An admin approves each Runner that uses it").check()
        panel.get_by_role("button", name="Download an installer").click()
        link = page.get_by_role("dialog", name="Installer ready").get_by_role(
            "link", name="Download the installer"
        )
        href = link.get_attribute("href") or ""
        with page.expect_download() as started:
            link.click()
        saved = tmp_path / "installer.zip"
        started.value.save_as(saved)
        # The installer comes from the assets store by a presigned link the API made; the
        # console's own files and calls stay on its origin.
        session.assert_clean(server.url, allowed=(href,))

    archive = zipfile.ZipFile(saved)
    names = set(archive.namelist())
    assert {"etikett-runner/install.sh", "etikett-runner/config.json"} <= names
    assert json.loads(archive.read("etikett-runner/config.json"))["group_id"] == group["id"]
    token = archive.read("etikett-runner/enrollment-token").decode().strip()
    # The box was ticked: a Runner installed with it waits for an admin's approval.
    waiting = FakeSite(tmp_path, "installed").enroll(admin, token)
    assert waiting.status_code == 201 and waiting.json()["status"] == "pending", waiting.text


# --- administration ------------------------------------------------------------------------------


def test_a_secret_credential_is_stored_never_shown_and_deleted(
    console: Session, server: DevServer, admin: Api
) -> None:
    page = console.page
    answers: list[str] = []
    page.on(
        "response",
        lambda response: (
            answers.append(response.text())
            if "/api/v1/credentials" in response.url and response.request.method != "DELETE"
            else None
        ),
    )
    sign_in(page, server, "admin")
    page.goto(f"{server.url}/console/admin/credentials")
    form = page.get_by_role("region", name="New credential")
    form.get_by_label("Kind").select_option("secret")
    secret = "geheim-" + unique("wert")
    form.get_by_label("Value", exact=True).fill(secret)

    # The API's own limit: a ref of 64 characters at most, refused before it is sent.
    form.get_by_label("Reference").fill("x" * 65)
    form.get_by_role("button", name="Store credential").click()
    expect(form.get_by_label("Reference")).to_have_attribute("aria-invalid", "true")
    expect(form.get_by_text(re.compile("^Allowed: up to 64"))).to_be_visible()
    assert not [r for r in admin.get("/credentials").json()["items"] if r["ref"] == "x" * 65]

    ref = unique("erp-token")
    form.get_by_label("Reference").fill(ref)
    # Where it may be sent: an origin with a path is refused by the API, next to the field.
    form.get_by_label("Allowed origins").fill("https://erp.example.com/api")
    form.get_by_role("button", name="Store credential").click()
    expect(form.get_by_label("Allowed origins")).to_have_attribute("aria-invalid", "true")
    form.get_by_label("Allowed origins").fill("https://ERP.example.com, https://erp2.example.com")
    form.get_by_role("button", name="Store credential").click()
    row = page.get_by_role("row").filter(has_text=ref)
    expect(row.get_by_role("cell").nth(4)).to_have_text("stored")
    expect(row.get_by_role("cell").nth(1)).to_have_text("secret")
    expect(row.get_by_role("cell").nth(3)).to_have_text(
        "https://erp.example.com, https://erp2.example.com"
    )
    expect(form.get_by_label("Value", exact=True)).to_have_value("")
    stored = next(c for c in admin.get("/credentials").json()["items"] if c["ref"] == ref)
    assert stored["has_secret"] is True and stored["kind"] == "secret"
    assert stored["origins"] == ["https://erp.example.com", "https://erp2.example.com"]
    assert secret not in page.content()
    assert answers and not [text for text in answers if secret in text]

    row.get_by_role("button", name=f"Delete {ref}").click()
    page.get_by_role("dialog", name=f"Delete {ref}?").get_by_role("button", name="Delete").click()
    expect(page.get_by_role("row").filter(has_text=ref)).to_have_count(0)
    assert ref not in {c["ref"] for c in admin.get("/credentials").json()["items"]}


def test_create_a_user_with_roles_and_deactivate_them(
    console: Session, server: DevServer, admin: Api
) -> None:
    username = unique("tom")
    page = console.page
    sign_in(page, server, "admin")
    page.goto(f"{server.url}/console/admin/users")
    new = page.get_by_role("region", name="New user")
    new.get_by_label("Username").fill("tom with spaces")
    new.get_by_label("Password").fill(PASSWORD)
    new.get_by_label("operator").check()
    new.get_by_label("approver").check()
    new.get_by_role("button", name="Create user").click()
    expect(new.get_by_label("Username")).to_have_attribute("aria-invalid", "true")
    new.get_by_label("Username").fill(username)
    new.get_by_role("button", name="Create user").click()
    expect(page.get_by_text(f"{username} created.")).to_be_visible()
    user = next(u for u in admin.get("/users").json()["items"] if u["username"] == username)
    assert sorted(user["roles"]) == ["approver", "operator"]
    session = admin.login(username)

    page.get_by_role("button", name=f"Deactivate {username}").click()
    page.get_by_role("dialog").get_by_role("button", name="Deactivate").click()
    expect(page.get_by_role("button", name=f"Reactivate {username}")).to_be_visible()
    assert admin.get("/auth/whoami", token=session).status_code == 401  # their sessions end


def test_without_the_apis_document_the_forms_still_work(
    console: Session, server: DevServer, admin: Api
) -> None:
    """The limits are a courtesy: if the OpenAPI document cannot load, the forms still offer
    their choices and the API's own refusal shows at the field."""
    page = console.page
    page.route("**/api/v1/openapi.json", lambda route: route.abort())
    sign_in(page, server, "admin")
    page.goto(f"{server.url}/console/admin/webhooks")
    events = page.get_by_role("group", name="Events").get_by_role("checkbox")
    expect(events).to_have_count(5)
    page.get_by_role("tab", name="Credentials").click()
    form = page.get_by_role("region", name="New credential")
    form.get_by_label("Kind").select_option("secret")
    form.get_by_label("Value", exact=True).fill("geheim")
    form.get_by_label("Reference").fill("x" * 65)
    form.get_by_role("button", name="Store credential").click()
    expect(form.get_by_role("alert")).to_contain_text("request.invalid")
    expect(form.get_by_label("Reference")).to_have_attribute("aria-invalid", "true")
    assert "x" * 65 not in {c["ref"] for c in admin.get("/credentials").json()["items"]}


def test_an_api_token_is_shown_once_and_revoked(
    console: Session, server: DevServer, admin: Api
) -> None:
    subject = unique("label-bot")
    page = console.page
    sign_in(page, server, "admin")
    page.goto(f"{server.url}/console/admin/tokens")
    page.get_by_label("Agent name (subject)").fill(subject)
    page.get_by_label("Role", exact=True).select_option("designer")
    page.get_by_role("button", name="Issue token").click()
    dialog = page.get_by_role("dialog", name=f"Token for {subject}")
    token = dialog.get_by_role("textbox", name="Secret").input_value()
    agent = admin.as_token(token).get("/auth/whoami").json()
    assert (agent["actor"], agent["subject"], agent["roles"]) == ("service", subject, ["designer"])
    dialog.get_by_role("button", name="I have stored it").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    row = page.get_by_role("row").filter(has_text=subject)
    expect(row).to_contain_text("designer")
    assert token not in page.content()  # shown once, never again

    row.get_by_role("button", name=f"Revoke the token of {subject}").click()
    page.get_by_role("dialog").get_by_role("button", name="Revoke").click()
    expect(page.get_by_role("row").filter(has_text=subject)).to_contain_text("revoked")
    assert admin.get("/auth/whoami", token=token).status_code == 401


def test_the_approval_policy_is_switched_here_by_a_person_who_is_an_admin(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    def enabled() -> bool:
        policies = admin.get("/policies").json()["items"]
        return bool(next(p for p in policies if p["name"] == "aiFreigabePflicht")["enabled"])

    page = console.page
    sign_in(page, server, person["username"])  # approver, designer, operator: not an admin
    expect(page.get_by_role("link", name="Administration")).to_have_count(0)
    page.goto(f"{server.url}/console/admin/policies")
    expect(page.get_by_role("alert")).to_have_text("Only admins administer the service.")
    page.get_by_role("button", name="Sign out").click()

    sign_in(page, server, "admin")
    page.goto(f"{server.url}/console/admin/policies")
    switch = page.get_by_role("switch", name=re.compile("^aiFreigabePflicht"))
    expect(switch).to_be_checked()
    try:
        switch.click()
        page.get_by_role("dialog").get_by_role("button", name="Switch off").click()
        expect(page.get_by_text("aiFreigabePflicht is off.")).to_be_visible()
        expect(switch).not_to_be_checked()
        assert enabled() is False
        switch.click()
        page.get_by_role("dialog").get_by_role("button", name="Switch on").click()
        expect(page.get_by_text("aiFreigabePflicht is on.")).to_be_visible()
        expect(switch).to_be_checked()
        assert enabled() is True
        entries = admin.get("/audit-log", params={"operation": "putPolicy"}).json()["items"]
        assert [(e["actor"], e["subject"]) for e in entries[:2]] == [("human", "admin")] * 2
    finally:
        if not enabled():  # the other tests of this module need the policy on
            admin.request("PUT", "/policies/aiFreigabePflicht", json={"enabled": True})


def test_the_audit_log_filters_by_who_acted(
    console: Session, server: DevServer, admin: Api, person: dict[str, Any]
) -> None:
    issued = admin.service_token("designer")
    agent = admin.as_token(issued["token"])
    made = agent.post(
        "/labels/from-dimensions", json={"name": "Bot", "width_mm": 40, "height_mm": 20}
    )
    assert made.status_code == 201, made.text

    page = console.page
    sign_in(page, server, person["username"])
    page.goto(f"{server.url}/console/audit")
    page.get_by_label("Who").fill(issued["subject"])
    page.get_by_label("Who").press("Enter")
    rows = page.locator("tbody tr")
    expect(rows.first).to_contain_text(made.json()["id"])
    who = {text.strip() for text in page.locator("tbody tr td:nth-child(2)").all_inner_texts()}
    assert who == {f"agent {issued['subject']}"}

    # A failed sign-in is no one's act: it shows as anonymous, not as a person.
    stranger = unique("niemand")
    refused = admin.post("/auth/login", json={"username": stranger, "password": PASSWORD}, token="")
    assert refused.status_code == 401
    page.get_by_label("Who").fill(stranger)
    page.get_by_label("Who").press("Enter")
    expect(page.locator("tbody tr td:nth-child(2)").first).to_have_text(f"anonymous {stranger}")
