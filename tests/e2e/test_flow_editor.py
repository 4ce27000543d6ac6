"""The flow editor in a real browser (Debian's chromium under Playwright) against a real service:
a flow built from nothing by drag and drop and saved as version 2; a lint finding on the node
with a bad expression that goes when it is fixed, and a save that meets a newer version without
overwriting it; a dry run of three records stepped through on the canvas with the two labels it
would print; two versions compared as a graph; a deployment started from the editor that waits
for its approval; and the canvas with the keyboard alone."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from e2e.flow_canvas import click_node, drag_type, node, port_ids, wire
from support.browser import console_session, sign_in
from support.client import PASSWORD, Api, unique
from support.model_server import ModelServer, tool_answer
from support.server import DevServer

pytestmark = pytest.mark.console

LABEL = {
    "size": {"width_mm": 60, "height_mm": 30},
    "dpi": 203,
    "variables": [
        {"name": "name", "type": "string", "required": True},
        {"name": "serial", "type": "string", "expression": "string(counters.editor_serial)"},
    ],
    "objects": [
        {"id": "t", "type": "text", "x_mm": 2, "y_mm": 2, "size_pt": 12, "expression": "name"},
        {"id": "s", "type": "text", "x_mm": 2, "y_mm": 14, "size_pt": 12, "expression": "serial"},
    ],
}


def routed(label_id: str) -> dict[str, Any]:
    """inbox → shape → route: a positive qty prints `ship`, else `skip` logs."""
    return {
        "nodes": [
            {
                "id": "inbox",
                "type": "trigger.folder",
                "path": "in",
                "format": "csv",
                "wires": ["shape"],
            },
            {
                "id": "shape",
                "type": "logic.set",
                "values": {"qty": "int(record.qty)"},
                "wires": ["route"],
            },
            {
                "id": "route",
                "type": "logic.switch",
                "cases": [{"when": "record.qty > 0", "wires": ["ship"]}],
                "otherwise": ["skip"],
            },
            {
                "id": "ship",
                "type": "action.print",
                "label": label_id,
                "printer": "shipping",
                "copies": "record.qty",
                "variables": {"name": "record.name"},
            },
            {"id": "skip", "type": "action.log", "message": "'nothing for ' + record.name"},
        ],
        "samples": [{"name": "Anna", "qty": "1"}],
    }


@pytest.fixture(scope="module")
def person(admin: Api) -> dict[str, Any]:
    return admin.create_user(["designer", "operator", "approver"], username=unique("ines"))


@pytest.fixture(scope="module")
def label_id(admin: Api) -> str:
    """An approved label printing a name and a serial of the counter `editor_serial`."""
    assert admin.post("/counters", json={"name": "editor_serial", "start": 7}).status_code == 201
    label = admin.post(
        "/labels/from-dimensions", json={"name": unique("Karton"), "width_mm": 60, "height_mm": 30}
    ).json()
    patched = admin.request(
        "PATCH",
        f"/labels/{label['id']}/document",
        json={"operations": [{"op": "replace", "path": "", "value": LABEL}]},
    )
    assert patched.status_code == 200, patched.text
    approved = admin.post(
        f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"}
    )
    assert approved.status_code == 200, approved.text
    return str(label["id"])


@pytest.fixture(scope="module")
def model(admin: Api) -> Iterator[ModelServer]:
    """A language model on loopback, the service's default one."""
    with ModelServer() as server:
        created = admin.post(
            "/credentials",
            json={
                "ref": "helper",
                "kind": "language-model",
                "provider": "anthropic-messages",
                "model": "claude-test",
                "endpoint": server.endpoint("anthropic-messages"),
                "default": True,
            },
        )
        assert created.status_code == 201, created.text
        yield server


@pytest.fixture
def console(browser: Browser, server: DevServer, person: dict[str, Any]) -> Iterator[Page]:
    with console_session(browser, {"width": 1280, "height": 800}) as session:
        sign_in(session.page, server.url, person["username"], PASSWORD)
        yield session.page
        session.assert_clean(server.url)


def open_editor(page: Page, server: DevServer, flow_id: str) -> None:
    page.goto(f"{server.url}/console/flows/{flow_id}/edit")
    expect(page.locator(".fe-state")).to_contain_text("Saved")
    expect(page.locator(".fe-props .muted")).to_be_visible()


def settings(page: Page) -> Any:
    return page.get_by_role("complementary", name="Node settings")


def test_build_a_flow_from_nothing_by_drag_and_drop_and_save_version_2(
    console: Page, server: DevServer, admin: Api, person: dict[str, Any], label_id: str
) -> None:
    page = console
    page.goto(f"{server.url}/console/flows")
    page.get_by_role("button", name="New flow").click()
    dialog = page.get_by_role("dialog", name="New flow")
    dialog.get_by_label("Name").fill("Versand Halle 3")
    dialog.get_by_role("button", name="Create and edit").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Edit Versand Halle 3")
    flow_id = page.url.split("/")[-2]
    expect(page.locator(".fe-empty")).to_be_visible()

    for node_type, x, y in [
        ("trigger.folder", 110, 150),
        ("logic.set", 330, 150),
        ("logic.switch", 550, 150),
        ("action.print", 550, 330),
    ]:
        drag_type(page, node_type, x, y)
    expect(page.locator(".fe-empty")).to_be_hidden()
    wire(page, "folder1", "out", "set1")
    wire(page, "set1", "out", "switch1")
    case, otherwise = port_ids(page, "switch1")[1:]
    assert case.startswith("case:") and otherwise == "otherwise"
    wire(page, "switch1", case, "print1")

    click_node(page, "folder1")
    settings(page).get_by_label("Path", exact=True).fill("/srv/labels/in")
    click_node(page, "set1")
    settings(page).get_by_role("button", name="Add Field").click()
    settings(page).get_by_label("Field", exact=True).fill("qty")
    settings(page).get_by_label("CEL", exact=True).fill("int(record.qty)")
    click_node(page, "switch1")
    settings(page).get_by_label("When", exact=True).fill("record.qty > 0")
    click_node(page, "print1")
    settings(page).get_by_label("Label", exact=True).select_option(label_id)
    variable = settings(page).get_by_label(re.compile(r"^name \(string, required\)"))
    variable.fill("record.name")  # the label's variables became fields of their own
    settings(page).get_by_label("Printer", exact=True).fill("shipping")
    settings(page).get_by_label("Printer", exact=True).press("Tab")
    expect(page.get_by_role("tab", name=re.compile(r"^Problems"))).to_have_text("Problems (0)")

    page.get_by_role("button", name="Save version…").click()
    save = page.get_by_role("dialog", name="Save version 2")
    save.get_by_label("Comment").fill("Built in the editor")
    save.get_by_role("button", name="Save version").click()
    expect(page.locator(".fe-state")).to_contain_text("v2")
    expect(page.locator(".fe-state")).to_contain_text("Saved")

    saved = admin.get(f"/flows/{flow_id}/document").json()
    assert saved["version"] == 2 and saved["findings"] == []
    nodes = {n["id"]: n for n in saved["document"]["nodes"]}
    assert [n["type"] for n in saved["document"]["nodes"]] == [
        "trigger.folder",
        "logic.set",
        "logic.switch",
        "action.print",
    ]
    assert nodes["folder1"]["path"] == "/srv/labels/in" and nodes["folder1"]["wires"] == ["set1"]
    assert nodes["set1"]["values"] == {"qty": "int(record.qty)"}
    assert nodes["set1"]["wires"] == ["switch1"]
    assert nodes["switch1"]["cases"] == [{"when": "record.qty > 0", "wires": ["print1"]}]
    assert "otherwise" not in nodes["switch1"]
    assert nodes["print1"]["label"] == label_id and nodes["print1"]["printer"] == "shipping"
    assert nodes["print1"]["variables"] == {"name": "record.name"}
    assert all(set(n["ui"]) == {"x", "y"} for n in nodes.values())  # where they were dropped
    assert nodes["switch1"]["ui"]["x"] > nodes["set1"]["ui"]["x"] > nodes["folder1"]["ui"]["x"]
    (latest, first) = admin.get(f"/flows/{flow_id}/versions").json()["items"]
    assert (latest["version"], latest["comment"]) == (2, "Built in the editor")
    assert latest["author"] == {"actor": "human", "subject": person["username"]}
    assert first["version"] == 1

    # Positions survive: the editor opened again draws each node where it was saved (at the
    # scale it opens with), measured against the saved positions rather than the drops, which
    # a busy machine's mouse may have placed a little apart.
    open_editor(page, server, flow_id)
    saved_at = {name: nodes[name]["ui"] for name in ("folder1", "switch1", "print1")}
    drawn = {name: node(page, name).bounding_box() for name in saved_at}
    scale = (drawn["switch1"]["x"] - drawn["folder1"]["x"]) / (
        saved_at["switch1"]["x"] - saved_at["folder1"]["x"]
    )
    assert scale > 0.2, drawn
    for name in ("switch1", "print1"):
        for axis in ("x", "y"):
            expected = scale * (saved_at[name][axis] - saved_at["folder1"][axis])
            assert abs(drawn[name][axis] - drawn["folder1"][axis] - expected) < 3, (drawn, saved_at)


def test_a_lint_finding_marks_the_node_until_it_is_fixed_and_a_newer_version_is_not_overwritten(
    console: Page, server: DevServer, admin: Api, label_id: str, model: ModelServer
) -> None:
    flow = admin.post(
        "/flows", json={"name": unique("Fehler"), "document": routed(label_id)}
    ).json()
    page = console
    open_editor(page, server, flow["id"])
    expect(node(page, "shape")).not_to_have_class(re.compile("fe-error"))
    click_node(page, "shape")
    expression = settings(page).get_by_label("CEL", exact=True)
    expression.fill("int(record.qty")  # typing: lint follows without leaving the field
    expect(node(page, "shape")).to_have_class(re.compile("fe-error"))
    expect(node(page, "shape")).to_have_attribute(
        "aria-label", re.compile(r"shape: logic.set, 1 error")
    )
    expect(expression).to_have_attribute("aria-invalid", "true")
    expect(settings(page).locator(".fe-finding-text")).to_contain_text("CEL")
    problem = page.locator('.fe-problem[data-code="flow.cel_invalid"]')
    expect(problem).to_have_attribute("data-node", "shape")
    expect(page.locator(".fe-state")).to_contain_text("Unsaved changes")

    expression.fill("int(record.qty)")
    expect(node(page, "shape")).not_to_have_class(re.compile("fe-error"))
    expect(problem).to_have_count(0)
    expect(expression).not_to_have_attribute("aria-invalid", "true")

    # Broken again, and fixed by the AI helper's suggestion, one click away.
    expression.fill("int(record.qty")
    expect(problem).to_have_count(1)
    model.then(
        lambda seen: tool_answer(
            seen,
            "explain_finding",
            {
                "explanation": "The parenthesis after qty is missing.",
                "operations": [
                    {"op": "replace", "path": "/nodes/1/values/qty", "value": "int(record.qty)"}
                ],
            },
        )
    )
    problem.get_by_role("button", name="Explain flow.cel_invalid on shape").click()
    expect(problem.locator(".fe-explanation")).to_contain_text(
        "The parenthesis after qty is missing."
    )
    (asked,) = model.requests
    prompt = asked.json["messages"][0]["content"][0]["text"]
    assert '"int(record.qty"' in prompt  # the unsaved document, not version 1
    problem.get_by_role("button", name="Apply the suggestion").click()
    expect(node(page, "shape")).not_to_have_class(re.compile("fe-error"))
    click_node(page, "shape")
    expression = settings(page).get_by_label("CEL", exact=True)
    expect(expression).to_have_value("int(record.qty)")
    # A typo in a field name is a warning against the sample records' fields.
    expression.fill("int(record.qtty)")
    expect(node(page, "shape")).to_have_class(re.compile("fe-warning"))
    expect(page.locator('.fe-problem[data-code="flow.cel_name_unknown"]')).to_contain_text(
        "record.qtty"
    )
    expression.fill("int(record.qty) * 2")
    expect(node(page, "shape")).not_to_have_class(re.compile("fe-warning"))

    # An agent saves version 2 meanwhile: saving here shows it and overwrites nothing.
    agent = admin.as_token(admin.service_token("designer", subject="flow-bot")["token"])
    patched = agent.request(
        "PATCH",
        f"/flows/{flow['id']}/document",
        json={
            "operations": [{"op": "replace", "path": "/nodes/4/message", "value": "'skip'"}],
            "comment": "Shorter",
        },
    )
    assert patched.status_code == 200, patched.text
    page.get_by_role("button", name="Save version…").click()
    page.get_by_role("dialog", name="Save version 2").get_by_role(
        "button", name="Save version"
    ).click()
    conflict = page.get_by_role("dialog", name="Someone saved a newer version")
    expect(conflict).to_contain_text("Version 2 was saved meanwhile by flow-bot (an agent)")
    conflict.get_by_role("button", name="Keep my changes here").click()
    expect(page.locator(".fe-state")).to_contain_text("Unsaved changes")
    latest = admin.get(f"/flows/{flow['id']}/document").json()
    assert latest["version"] == 2
    assert latest["document"]["nodes"][1]["values"] == {"qty": "int(record.qty)"}
    assert latest["document"]["nodes"][4]["message"] == "'skip'"


def test_a_dry_run_of_three_records_steps_through_the_trace_and_shows_two_labels(
    console: Page, server: DevServer, admin: Api, label_id: str
) -> None:
    flow = admin.post("/flows", json={"name": unique("Probe"), "document": routed(label_id)}).json()
    counter = admin.get("/counters/editor_serial").json()
    page = console
    open_editor(page, server, flow["id"])
    page.get_by_role("tab", name="Dry run").click()
    page.get_by_label("Records (JSON, JSON lines or CSV with a header row)").fill(
        "name;qty\nAnna;2\nBert;0\nCleo;1\n"
    )
    page.get_by_role("button", name="Dry run", exact=True).click()
    status = page.locator(".fe-dry-out [role=status]")
    expect(status).to_have_text(
        "3 records from inbox: 2 prints. Nothing was printed, sent or written."
    )
    bar = page.locator(".fe-step-bar")
    expect(bar).to_contain_text("Step 1 of 4: inbox (trigger.folder)")
    expect(node(page, "inbox")).to_have_class(re.compile("fe-step"))
    expect(node(page, "skip")).to_have_class(re.compile("fe-skipped"))
    page.get_by_role("button", name="Next step ▶").click()
    expect(bar).to_contain_text("Step 2 of 4: shape (logic.set)")
    expect(node(page, "shape")).to_have_class(re.compile("fe-step"))
    expect(page.locator(".fe-step pre").nth(1)).to_contain_text('"qty": 2')
    page.get_by_role("button", name="Next step ▶").click()
    page.get_by_role("button", name="Next step ▶").click()
    expect(bar).to_contain_text("Step 4 of 4: ship (action.print)")
    expect(page.locator(".fe-effects")).to_contain_text("not performed")
    page.get_by_label("Record to step through").select_option("1")  # Bert: qty 0, logged
    expect(node(page, "skip")).to_have_class(re.compile("fe-executed"))
    expect(node(page, "ship")).to_have_class(re.compile("fe-skipped"))

    pictures = page.locator(".fe-previews img")
    expect(pictures).to_have_count(2)
    dots = admin.post(f"/labels/{label_id}/preview", json={"variables": {"name": "x"}}).headers[
        "x-label-dots"
    ]
    for picture in pictures.all():
        expect(picture).to_have_js_property("complete", True)
        size = picture.evaluate("img => `${img.naturalWidth}x${img.naturalHeight}`")
        assert size == dots  # the label's own print raster
    first, second = (p.get_attribute("src") for p in pictures.all())
    assert first != second
    captions = page.locator(".fe-previews figcaption").all_inner_texts()
    assert captions == ["Print 1 · 2 copies", "Print 2 · 1 copy"]
    alt = pictures.first.get_attribute("alt") or ""
    assert f"{label_id} version 2" in alt
    # Nothing ran anywhere, nothing was counted.
    assert admin.get(f"/flows/{flow['id']}/runs").json()["items"] == []
    assert admin.get("/counters/editor_serial").json() == counter


def test_the_graph_diff_of_two_versions_marks_the_changed_node(
    console: Page, server: DevServer, admin: Api, label_id: str
) -> None:
    flow = admin.post("/flows", json={"name": unique("Diff"), "document": routed(label_id)}).json()
    changed = admin.request(
        "PATCH",
        f"/flows/{flow['id']}/document",
        json={
            "operations": [
                {"op": "replace", "path": "/nodes/1/values/qty", "value": "int(record.qty) * 2"}
            ]
        },
    )
    assert changed.status_code == 200, changed.text
    page = console
    open_editor(page, server, flow["id"])
    page.get_by_role("tab", name="Versions").click()
    page.get_by_role("button", name="Changes of v2").click()
    dialog = page.get_by_role("dialog", name="Compare v1 with v2")
    expect(dialog.locator('.x6-node[data-cell-id="shape"]')).to_have_attribute(
        "data-diff", "changed"
    )
    expect(dialog.locator('.x6-node[data-cell-id="shape"]')).to_have_class(re.compile("fe-changed"))
    for same in ("inbox", "route", "ship", "skip"):
        expect(dialog.locator(f'.x6-node[data-cell-id="{same}"]')).to_have_attribute(
            "data-diff", "same"
        )
    expect(dialog.locator(".fe-setting-diff")).to_contain_text(
        "/values/qty: int(record.qty) → int(record.qty) * 2"
    )
    page.keyboard.press("Escape")
    expect(dialog).to_have_count(0)


def test_a_deployment_started_in_the_editor_waits_for_its_approval(
    console: Page, server: DevServer, admin: Api, label_id: str
) -> None:
    group = admin.post("/runner-groups", json={"name": unique("Halle")}).json()
    flow = admin.post(
        "/flows", json={"name": unique("Ausrollen"), "document": routed(label_id)}
    ).json()
    page = console
    open_editor(page, server, flow["id"])
    page.get_by_role("button", name="Deploy…").click()
    dialog = page.get_by_role("dialog", name="New deployment")
    expect(dialog.get_by_label("Flow")).to_have_value(flow["id"])
    expect(dialog.get_by_label("Printer alias")).to_have_value("shipping")  # the flow's alias
    dialog.get_by_role("group", name="Stage 1: Runner groups").get_by_label(group["name"]).check()
    dialog.get_by_role("button", name="Create deployment").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Deployment of {flow['name']} v1")
    stage = page.get_by_role("article", name="Stage 1")
    expect(stage.locator(".badge").first).to_have_text("awaiting approval")
    deployment = admin.get(f"/deployments/{page.url.rsplit('/', 1)[1]}").json()
    assert (deployment["flow_id"], deployment["version"]) == (flow["id"], 1)
    assert deployment["stages"][0]["group_ids"] == [group["id"]]


def test_add_wire_move_delete_undo_and_paste_with_the_keyboard_alone(
    console: Page, server: DevServer, admin: Api
) -> None:
    flow = admin.post("/flows", json={"name": unique("Tastatur")}).json()
    page = console
    open_editor(page, server, flow["id"])
    page.get_by_role("button", name=re.compile(r"^Add trigger\.schedule")).focus()
    page.keyboard.press("Enter")
    expect(node(page, "schedule1")).to_have_class(re.compile("fe-selected"))
    expect(page.locator(".fe-graph")).to_be_focused()
    page.get_by_role("button", name=re.compile(r"^Add action\.log")).focus()
    page.keyboard.press("Enter")  # beside the chosen node
    expect(node(page, "log1")).to_have_class(re.compile("fe-selected"))
    first, second = node(page, "schedule1").bounding_box(), node(page, "log1").bounding_box()
    assert first and second and second["x"] > first["x"]

    page.keyboard.press("ArrowLeft")  # from log1 to the node on its left
    expect(node(page, "schedule1")).to_have_class(re.compile("fe-selected"))
    page.keyboard.press("w")
    wire_to = page.get_by_label("Output of schedule1: wire to")
    expect(wire_to).to_be_focused()
    wire_to.select_option("log1")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator(".x6-edge")).to_have_count(1)

    page.locator(".fe-graph").focus()
    before = node(page, "schedule1").bounding_box()
    page.keyboard.press("Shift+ArrowDown")
    after = node(page, "schedule1").bounding_box()
    assert before and after and after["y"] > before["y"]
    page.keyboard.press("ArrowRight")
    expect(node(page, "log1")).to_have_class(re.compile("fe-selected"))
    page.keyboard.press("Delete")
    expect(node(page, "log1")).to_have_count(0)
    expect(page.locator(".x6-edge")).to_have_count(0)
    page.keyboard.press("Control+z")
    expect(node(page, "log1")).to_have_count(1)
    expect(page.locator(".x6-edge")).to_have_count(1)
    page.keyboard.press("ArrowRight")  # nothing chosen after the undo: the first node
    expect(node(page, "schedule1")).to_have_class(re.compile("fe-selected"))
    page.keyboard.press("Control+c")
    page.keyboard.press("Control+v")
    expect(node(page, "schedule2")).to_have_class(re.compile("fe-selected"))
    expect(page.locator(".x6-node")).to_have_count(3)
    page.keyboard.press("Control+Shift+z")  # nothing to redo: the paste stays
    expect(page.locator(".x6-node")).to_have_count(3)
