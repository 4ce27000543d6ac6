"""Every page of the browser console, as the router lists it (so a new page cannot escape): each
control and region has an accessible name in chromium's accessibility tree, Tab reaches every
control with a visible focus indicator and comes round again, nothing only a mouse can operate,
and no sideways scrolling at tablet width. Then the key flows with the keyboard alone: sign in,
a new label, a stage approved through its dialog (focus held inside, and given back), tabs and
the flow graph, a role granted without losing one's place."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from support import a11y
from support.browser import TABLET, Session, console_session, sign_in
from support.client import PASSWORD, Api, unique
from support.runner_site import FakeSite
from support.server import DevServer

pytestmark = pytest.mark.console

FLOW = {
    "nodes": [
        {"id": "inbox", "type": "trigger.folder", "path": "in", "format": "csv", "wires": ["qty"]},
        {"id": "qty", "type": "logic.set", "values": {"n": "int(record.n)"}, "wires": ["route"]},
        {
            "id": "route",
            "type": "logic.switch",
            "cases": [{"when": "record.n > 0", "wires": ["say"]}],
            "otherwise": ["skip"],
        },
        {"id": "say", "type": "action.log", "message": "'parcel ' + string(record.n)"},
        {"id": "skip", "type": "action.log", "message": "'empty'"},
    ],
    "samples": [{"n": "2"}],
}
SHELF = {
    "product_name": "Milch",
    "price": "1.09",
    "net_quantity": "1000",
    "gtin": "4012345000023",
    "article_number": "A-1",
}


@pytest.fixture(scope="module")
def site(admin: Api, server: DevServer, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One of everything a page shows: a label with an agent's draft, a Runner with a printer, a
    job, a pending enrollment, a flow and its deployment, context at each level, a user, a
    token, a webhook and a credential."""
    folder = tmp_path_factory.mktemp("sites")
    ines = admin.create_user(["designer", "operator", "approver"], username=unique("ines"))
    human = admin.as_token(admin.login(ines["username"]))
    label = human.post("/labels/from-vorlage", json={"vorlageId": "shelf-label", "name": "Regal"})
    label_id = label.json()["id"]
    human.post(f"/labels/{label_id}/status", json={"version": 1, "status": "approved"})
    agent = admin.as_token(admin.service_token("designer")["token"])
    agent.request(
        "PATCH",
        f"/labels/{label_id}/document",
        json={"operations": [{"op": "replace", "path": "/objects/0/x_mm", "value": 9}]},
    )

    group = admin.post("/runner-groups", json={"name": unique("Halle")}).json()
    token = admin.post(f"/runner-groups/{group['id']}/enrollment-tokens", json={}).json()
    enrolled = FakeSite(folder, "site-a").enroll(admin, token["token"]).json()
    waiting = admin.post(
        f"/runner-groups/{group['id']}/enrollment-tokens", json={"needs_approval": True}
    ).json()
    assert FakeSite(folder, "site-b").enroll(admin, waiting["token"]).status_code == 201
    runner_id = enrolled["runner_id"]
    printer = admin.post(
        "/printers",
        json={
            "name": "Zebra Halle",
            "runner_id": runner_id,
            "uri": "tcp://127.0.0.1:9",
            "language": "zpl",
            "dpi": 203,
        },
    )
    assert printer.status_code == 201, printer.text
    printed = human.post(
        "/print", json={"label_id": f"{label_id}@1", "printer": "Zebra Halle", "variables": SHELF}
    )
    assert printed.status_code == 202, printed.text

    flow = admin.post("/flows", json={"name": unique("Versand"), "document": FLOW}).json()
    deployment = human.post(
        "/deployments",
        json={
            "flow_id": flow["id"],
            "version": 1,
            "stages": [{"group_ids": [group["id"]]}],
            "context": {"hall": "1"},
        },
    ).json()
    assert deployment["stages"][0]["status"] == "awaiting_approval", deployment
    for path in (f"/runner-groups/{group['id']}", f"/runners/{runner_id}"):
        set_ = admin.request("PUT", f"{path}/context/hall", json={"value": "2"})
        assert set_.status_code == 200, set_.text
    stored = admin.post("/credentials", json={"ref": "erp", "kind": "secret", "value": "s3cret"})
    assert stored.status_code == 201, stored.text
    hook = admin.post(
        "/webhooks", json={"url": "http://127.0.0.1:9/hook", "events": ["print.sent"]}
    )
    assert hook.status_code == 201, hook.text
    return {
        "labels": label_id,
        "jobs": printed.json()["job_id"],
        "flows": flow["id"],
        "deployments": deployment["id"],
        "runners": runner_id,
        "admin": "users",
        "user": ines["username"],
    }


def routes(page: Page) -> list[str]:
    """The console's own list of pages (its router), read from the running page."""
    return list(
        page.evaluate(
            """async () => {
                const src = document.querySelector('script[type=module][src$="/app.js"]').src;
                return (await import(src)).ROUTES.map(([path]) => path);
            }"""
        )
    )


def paths(page: Page, site: dict[str, str]) -> list[str]:
    """Every page of the router with the site's ids in place of its parameters."""
    found = []
    for route in routes(page):
        if route == "/signin":
            continue
        head = route.split("/")[1]
        if ":" in route:
            assert head in site, f"a new page {route}: give this test something to show on it"
            route = re.sub(r":\w+", site[head], route)
        found.append(route)
    return found


def states(page: Page) -> Iterator[str]:
    """The page as it is, then with each of its tabs chosen (tabs render when first chosen)."""
    yield "—"
    names = [tab.inner_text() for tab in page.get_by_role("tab").all()]
    for name in names:
        page.get_by_role("tab", name=name, exact=True).click()
        page.wait_for_load_state("networkidle")
        yield name


def open_page(page: Page, origin: str, path: str) -> None:
    page.goto(f"{origin}/console{path}")
    # Playwright reads an h1 as level 1 whatever its aria-level: the page's own is the first.
    expect(page.get_by_role("heading", level=1).first).to_be_visible()
    expect(page.locator("main .loading")).to_have_count(0)
    page.wait_for_load_state("networkidle")
    assert len(a11y.top_headings(page)) == 1, (path, a11y.top_headings(page))


@pytest.fixture
def console(browser: Browser, server: DevServer) -> Iterator[Session]:
    with console_session(browser) as session:
        a11y.track_clicks(session.context)
        yield session
        session.assert_clean(server.url)


def test_every_page_names_its_controls_and_shows_where_the_focus_is(
    console: Session, server: DevServer, site: dict[str, str]
) -> None:
    page = console.page
    page.goto(server.url + "/")
    expect(page.get_by_role("heading", level=1, name="Sign in")).to_be_visible()
    problems = {"/signin": a11y.unnamed(page) + a11y.tab_walk(page).problems()}

    sign_in(page, server.url, "admin", PASSWORD)
    visited = paths(page, site)
    assert len(visited) >= 16, visited  # the router is read, not an empty list
    for path in visited:
        open_page(page, server.url, path)
        for state in states(page):
            found = a11y.unnamed(page) + a11y.tab_walk(page).problems() + a11y.mouse_only(page)
            found += [f"pattern never checked: {field}" for field in a11y.broken_patterns(page)]
            if found:
                problems[f"{path} [{state}]"] = found
    problems["the browser's console"] = console.errors
    report = [f"{where}: {item}" for where, found in problems.items() for item in found]
    assert not report, "\n".join(report)


def test_every_page_fits_a_tablet_without_sideways_scrolling(
    browser: Browser, server: DevServer, site: dict[str, str]
) -> None:
    with console_session(browser, TABLET) as session:
        page = session.page
        sign_in(page, server.url, "admin", PASSWORD)
        wide = {}
        for path in paths(page, site):
            open_page(page, server.url, path)
            for state in states(page):
                overflow = a11y.sideways_overflow(page)
                if overflow > 0:
                    wide[f"{path} [{state}]"] = overflow
        assert not wide, wide
        session.assert_clean(server.url)


# Every kind of dialog the console opens, from the page and button that open it (dialogs have
# no address of their own, so this list is kept by hand).
DIALOGS = [
    ("/labels", None, "New label"),
    ("/labels", None, "Import file"),
    ("/labels/{labels}", None, "Duplicate"),
    ("/labels/{labels}", "Versions (2)", "Approve v2"),
    ("/flows/{flows}/edit", None, "Keyboard shortcuts"),
    ("/deployments", None, "New deployment"),
    ("/deployments/{deployments}", None, "Approve stage 1"),
    ("/deployments/{deployments}", None, "Roll back"),
    ("/archive", None, re.compile("^Print again")),
    ("/runners/{runners}", None, "Remove Runner"),
    ("/printers", None, "Remove Zebra Halle"),
    ("/admin/users", None, re.compile("^Set the password of ")),
]


def test_every_dialog_names_its_controls_holds_focus_and_gives_it_back(
    console: Session, server: DevServer, site: dict[str, str]
) -> None:
    page = console.page
    sign_in(page, server.url, "admin", PASSWORD)
    problems = []
    for path, tab, name in DIALOGS:
        open_page(page, server.url, path.format(**site))
        if tab:
            page.get_by_role("tab", name=tab).click()
        opener = page.get_by_role("button", name=name).first
        opener.focus()
        page.keyboard.press("Enter")
        dialog = page.get_by_role("dialog")
        expect(dialog).to_be_visible()
        where = f"{path} {name}"
        walk = a11y.tab_walk(page)
        problems += [f"{where}: {item}" for item in a11y.unnamed(page) + walk.problems()]
        left = [stop["what"] for stop in walk.stops if not stop["in_dialog"]]
        problems += [f"{where}: Tab left the dialog for {what}" for what in left]
        page.keyboard.press("Escape")
        expect(dialog).to_have_count(0)
        expect(opener).to_be_focused()
    assert not problems, "\n".join(problems)


# --- the key flows with the keyboard alone -------------------------------------------------------


def tab_to(page: Page, name: str, *, limit: int = 120, back: bool = False) -> None:
    """Press Tab (or Shift+Tab) until the focused control's accessible name is `name`."""
    for _ in range(limit):
        page.keyboard.press("Shift+Tab" if back else "Tab")
        focused = page.evaluate(
            """() => { const el = document.activeElement;
                return (el.getAttribute('aria-label') || el.textContent || '').trim(); }"""
        )
        if focused == name:
            return
    pytest.fail(f"Tab never reached {name!r}")


def focus_stays_in_dialog(page: Page) -> bool:
    """Focus is in the open dialog, or (past its last control) in the browser's own UI, never
    on the page behind it."""
    return bool(
        page.evaluate(
            """() => { const el = document.activeElement;
                return el === document.body || Boolean(el.closest('dialog[open]')); }"""
        )
    )


def test_sign_in_and_create_a_label_with_the_keyboard(
    console: Session, server: DevServer, admin: Api, site: dict[str, str]
) -> None:
    page = console.page
    page.goto(server.url + "/")
    expect(page.get_by_label("Username")).to_be_focused()
    page.keyboard.type(site["user"])
    page.keyboard.press("Tab")
    page.keyboard.type(PASSWORD)
    page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1, name="Labels")).to_be_focused()

    tab_to(page, "New label")
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="New label")
    expect(dialog.get_by_role("textbox", name="Name")).to_be_focused()
    # Focus stays in the dialog, both ways round.
    for key in ["Tab"] * 12 + ["Shift+Tab"] * 12:
        page.keyboard.press(key)
        assert focus_stays_in_dialog(page), key
    page.keyboard.press("Escape")
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_role("button", name="New label")).to_be_focused()

    page.keyboard.press("Enter")
    expect(dialog.get_by_role("textbox", name="Name")).to_be_focused()
    page.keyboard.type("Tastatur")
    page.keyboard.press("Tab")  # to the tabs: "From a Vorlage" is chosen, its radios follow
    expect(dialog.get_by_role("tab", name="From a Vorlage")).to_be_focused()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    expect(dialog.get_by_role("radio").first).to_be_focused()
    page.keyboard.press("ArrowDown")  # the second Vorlage
    chosen = dialog.get_by_role("radio").nth(1).get_attribute("value")
    page.keyboard.press("Enter")  # submits the form
    expect(page.get_by_role("heading", level=1, name="Tastatur")).to_be_visible()
    found = re.search(r"/labels/(lbl_[^/]+)/design$", page.url)  # a new label opens to design
    assert found, page.url
    label = admin.get(f"/labels/{found.group(1)}").json()
    assert label["vorlage_id"] == chosen


def test_a_stage_is_approved_with_the_keyboard_alone(
    console: Session, server: DevServer, admin: Api, site: dict[str, str]
) -> None:
    human = admin.as_token(admin.login(site["user"]))
    group_id = admin.get(f"/runners/{site['runners']}").json()["group_id"]
    deployment = human.post(
        "/deployments",
        json={"flow_id": site["flows"], "version": 1, "stages": [{"group_ids": [group_id]}]},
    ).json()
    page = console.page
    sign_in(page, server.url, site["user"], PASSWORD)
    open_page(page, server.url, f"/deployments/{deployment['id']}")

    tab_to(page, "Approve stage 1")
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Approve stage 1")
    expect(dialog.get_by_role("textbox", name="Comment")).to_be_focused()
    walk = a11y.tab_walk(page)
    assert walk.cycled and all(stop["in_dialog"] for stop in walk.stops), walk.stops
    assert not walk.problems() and not a11y.unnamed(page)
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)
    expect(page.get_by_role("button", name="Approve stage 1")).to_be_focused()

    page.keyboard.press("Enter")
    page.keyboard.type("Checked with the keyboard")
    page.keyboard.press("Enter")
    stage = page.get_by_role("article", name="Stage 1")
    expect(stage.locator(".badge").first).to_have_text(re.compile("rolling out|active"))
    # The button is gone with the approval: focus is on its stage, not lost at the page's start.
    expect(stage).to_be_focused()
    approved = admin.get(f"/deployments/{deployment['id']}").json()["stages"][0]
    assert approved["approved_by"] == site["user"]


def test_tabs_and_the_flow_graph_with_the_keyboard(
    console: Session, server: DevServer, site: dict[str, str]
) -> None:
    page = console.page
    sign_in(page, server.url, "admin", PASSWORD)
    open_page(page, server.url, f"/flows/{site['flows']}")
    tab_to(page, "Graph")
    page.keyboard.press("Tab")  # the tab's panel
    page.keyboard.press("Tab")  # its first node
    expect(page.locator(".node-details h3")).to_have_text("inbox (trigger.folder)")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator(".node-details h3")).to_have_text("qty (logic.set)")

    tab_to(page, "Graph", back=True)
    page.keyboard.press("End")
    expect(page.get_by_role("tab", name="Deployments")).to_have_attribute("aria-selected", "true")
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.get_by_role("tab", name="Dry run")).to_be_focused()
    expect(page.get_by_role("tabpanel", name="Dry run")).to_be_visible()
    tab_to(page, "Dry run", limit=20)  # the panel's controls, then its button
    page.keyboard.press("Enter")
    expect(page.get_by_text(re.compile(r"^Dry run of v1 from inbox: 1 samples"))).to_be_visible()


def test_a_role_is_granted_without_losing_ones_place(
    console: Session, server: DevServer, admin: Api
) -> None:
    user = admin.create_user(["designer"], username=unique("kai"))
    page = console.page
    sign_in(page, server.url, "admin", PASSWORD)
    open_page(page, server.url, "/admin/users")
    tab_to(page, f"Role to grant {user['username']}")
    page.keyboard.press("ArrowDown")  # operator → approver, as a keyboard picks it
    chosen = page.get_by_label(f"Role to grant {user['username']}").input_value()
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    granted = page.get_by_role("button", name=f"Remove role {chosen} from {user['username']}")
    expect(granted).to_be_visible()
    # The table was drawn again; focus is on the same control of the same row.
    expect(page.get_by_role("button", name=f"Grant the role to {user['username']}")).to_be_focused()
    roles = {u["username"]: u["roles"] for u in admin.get("/users").json()["items"]}
    assert sorted(roles[user["username"]]) == sorted(["designer", chosen])
