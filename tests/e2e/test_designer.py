"""The label designer in a real browser (Debian's chromium under Playwright) against a real
service: a label from a preset designed with the mouse and the keyboard and saved as version 2
(its preview scans), a barcode dragged past the edge and its finding on the canvas, a ZPL file
imported with its report, a Copilot proposal from a language model (a loopback server speaking
its wire format) shown as a diff and accepted, unsaved work that survives a reload and a version
saved meanwhile that is never overwritten, objects copied from one label into another, and the
designer's own rules (units, history, merge, GS1) run in the browser. One browser and one
service for the module."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import Any

import pytest
import zxingcpp
from PIL import Image
from playwright.sync_api import Browser, Page, expect

from support.browser import Session, console_session, running_browser, sign_in
from support.client import PASSWORD, Api, unique
from support.model_server import ModelServer, Seen, tool_answer
from support.server import DevServer

pytestmark = pytest.mark.console

DOT_MM = 25.4 / 203
BARCODE = {
    "id": "code",
    "type": "barcode",
    "symbology": "code128",
    "x_mm": 6,
    "y_mm": 8,
    "height_mm": 10,
    "module_width_dots": 2,
    "content": "LAGER-7",
}
TITLE = {"id": "title", "type": "text", "x_mm": 6, "y_mm": 2, "content": "Lager", "size_pt": 12}


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with running_browser() as running:
        yield running


@pytest.fixture(scope="module")
def person(admin: Api) -> dict[str, Any]:
    return admin.create_user(["designer", "operator", "approver"], username=unique("greta"))


@pytest.fixture(scope="module")
def human(admin: Api, person: dict[str, Any]) -> Api:
    return admin.as_token(admin.login(person["username"]))


@pytest.fixture
def console(browser: Browser, server: DevServer, person: dict[str, Any]) -> Iterator[Session]:
    with console_session(browser, {"width": 1280, "height": 800}) as session:
        sign_in(session.page, server.url, person["username"], PASSWORD)
        yield session
        session.assert_clean(server.url)


def a_label(api: Api, *objects: dict[str, Any], width: float = 60, height: float = 30) -> str:
    created = api.post(
        "/labels/from-dimensions",
        json={"name": unique("Designer"), "width_mm": width, "height_mm": height},
    )
    assert created.status_code == 201, created.text
    label_id = str(created.json()["id"])
    if objects:
        patched = api.request(
            "PATCH",
            f"/labels/{label_id}/document",
            json={"operations": [{"op": "add", "path": "/objects/-", "value": o} for o in objects]},
        )
        assert patched.status_code == 200, patched.text
    return label_id


def open_designer(page: Page, server: DevServer, label_id: str) -> None:
    page.goto(f"{server.url}/console/labels/{label_id}/design")
    painted(page, 1)


def painted(page: Page, at_least: int) -> None:
    """Wait until the canvas has painted `at_least` layouts since the page opened."""
    page.wait_for_function(
        "(n) => Number(document.querySelector('.dz')?.dataset.painted || 0) >= n", arg=at_least
    )


def paints(page: Page) -> int:
    return int(page.evaluate("Number(document.querySelector('.dz').dataset.painted || 0)"))


def after(page: Page, action: Any) -> None:
    """Do `action`, then wait for the next layout to be painted."""
    count = paints(page)
    action()
    painted(page, count + 1)


# Where an object's hit area and the resize handles are on the page, read from the canvas.
GEOMETRY = """(id) => {
  const stage = window.Konva.stages.find((s) => s.container().closest('.dz'));
  const place = stage.container().getBoundingClientRect();
  const rect = stage.find('.object').find((r) => r.objectId === id);
  const at = (node) => {
    const b = node.getClientRect();
    return {x: place.x + b.x, y: place.y + b.y, width: b.width, height: b.height};
  };
  const transformer = stage.findOne('Transformer');
  const shown = transformer && transformer.nodes().length;
  const handle = shown ? transformer.findOne('.middle-right') : null;
  return {box: rect ? at(rect) : null, handle: handle ? at(handle) : null, scale: stage.scaleX()};
}"""


def geometry(page: Page, object_id: str) -> dict[str, Any]:
    found = page.evaluate(GEOMETRY, object_id)
    assert found["box"], f"{object_id} is not on the canvas"
    return dict(found)


def drag(page: Page, x: float, y: float, dx: float, dy: float) -> None:
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + dx / 3, y + dy / 3, steps=4)
    page.mouse.move(x + dx, y + dy, steps=6)
    page.mouse.up()


def drag_object(page: Page, object_id: str, dx_mm: float, dy_mm: float = 0) -> None:
    where = geometry(page, object_id)
    box, per_dot = where["box"], where["scale"]
    centre = (box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    px = (round(dx_mm / DOT_MM) * per_dot, round(dy_mm / DOT_MM) * per_dot)
    after(page, lambda: drag(page, *centre, *px))


def field_value(page: Page, label: str) -> str:
    return page.locator(".dz-properties").get_by_label(label, exact=True).input_value()


def test_design_a_label_from_a_preset_and_save_version_2(
    console: Session, server: DevServer, human: Api
) -> None:
    page = console.page
    page.get_by_role("button", name="New label").click()
    dialog = page.get_by_role("dialog", name="New label")
    dialog.get_by_role("textbox", name="Name").fill("Versand Zebra")
    dialog.get_by_role("tab", name="Media preset").click()
    dialog.get_by_label("Label stock").select_option("zebra-4x6-203")
    dialog.get_by_role("button", name="Create label").click()
    expect(page.get_by_role("heading", level=1, name="Versand Zebra")).to_be_visible()
    label_id = re.search(r"/labels/(lbl_[^/]+)/design", page.url).group(1)  # type: ignore[union-attr]
    painted(page, 1)
    assert "101.6 × 152.4 mm · 203 dpi · 812 × 1218 dots" in page.locator(".dz-size").inner_text()

    after(page, lambda: page.get_by_role("button", name="Add Text", exact=True).click())
    after(page, lambda: page.get_by_role("button", name="Add Code 128").click())
    objects = page.get_by_role("listbox", name="Objects on the label")
    expect(objects.get_by_role("option")).to_have_count(2)
    expect(objects.get_by_role("option", selected=True)).to_contain_text("code128")

    # The text, moved 5 mm to the right with the mouse (on the 1 mm grid; snapping to other
    # objects' edges, which would catch it at this zoom, is off).
    page.get_by_label("Snap to objects").uncheck()
    objects.get_by_role("option", name=re.compile("^text")).click()
    x_before = float(field_value(page, "X (mm)"))
    drag_object(page, "text", 5)
    expect(page.locator(".dz-properties").get_by_label("X (mm)", exact=True)).not_to_have_value(
        str(x_before)
    )

    # The barcode, made wider by a handle: its module grows from 2 dots to 3.
    objects.get_by_role("option", name=re.compile("^code128")).click()
    where = geometry(page, "code128")
    width_before = where["box"]["width"]
    handle = where["handle"]
    assert handle, "the selected barcode has its resize handles"
    after(
        page,
        lambda: drag(
            page,
            handle["x"] + handle["width"] / 2,
            handle["y"] + handle["height"] / 2,
            width_before * 0.55,
            0,
        ),
    )
    expect(page.locator(".dz-properties").get_by_label("Module width (dots)")).to_have_value("3")
    widened = geometry(page, "code128")["box"]["width"]
    assert widened > width_before * 1.3

    # Undo takes the resize back, redo brings it again.
    page.locator(".konvajs-content").focus()
    after(page, lambda: page.keyboard.press("Control+z"))
    assert abs(geometry(page, "code128")["box"]["width"] - width_before) < 1
    after(page, lambda: page.keyboard.press("Control+Shift+z"))
    assert abs(geometry(page, "code128")["box"]["width"] - widened) < 1

    page.get_by_role("button", name="Save", exact=True).click()
    save = page.get_by_role("dialog", name="Save as version 2")
    save.get_by_label("Comment").fill("Text and a Code 128")
    save.get_by_role("button", name="Save version").click()
    expect(page.get_by_text("Saved as version 2.")).to_be_visible()
    expect(page.locator(".dz-state")).to_contain_text("saved")

    version = human.get(f"/labels/{label_id}/versions/2").json()
    assert version["comment"] == "Text and a Code 128"
    assert version["author"] == {
        "actor": "human",
        "subject": human.get("/auth/whoami").json()["subject"],
    }
    by_id = {o["id"]: o for o in version["document"]["objects"]}
    assert abs(by_id["text"]["x_mm"] - (x_before + 5)) <= DOT_MM + 1e-9
    assert by_id["code128"]["module_width_dots"] == 3
    preview = human.post(f"/labels/{label_id}/preview", json={}, params={"version": 2})
    assert preview.status_code == 200
    decoded = zxingcpp.read_barcodes(Image.open(io.BytesIO(preview.content)).convert("L"))
    assert [result.text for result in decoded] == [by_id["code128"]["content"]]


def test_a_barcode_dragged_past_the_edge_shows_its_finding_on_the_canvas(
    console: Session, server: DevServer, human: Api
) -> None:
    page = console.page
    label_id = a_label(human, TITLE, BARCODE)
    open_designer(page, server, label_id)
    expect(page.locator(".dz-findings-count")).to_have_text("no findings")
    drag_object(page, "code", 40)
    expect(page.locator(".dz-findings-count")).to_have_text(re.compile(r"^1 errors"))
    mark = page.evaluate(
        """() => {
            const stage = window.Konva.stages.find((s) => s.container().closest('.dz'));
            const mark = stage.findOne('#finding:code');
            return mark ? mark.name() : null;
        }"""
    )
    assert mark == "finding finding-error"
    page.get_by_role("tab", name=re.compile("^Findings")).click()
    finding = page.locator(".dz-finding.error")
    expect(finding).to_contain_text("label.barcode_clipped")
    expect(finding).to_contain_text("right edge")
    # A finding selects its object.
    finding.get_by_role("button", name="code").click()
    expect(
        page.get_by_role("listbox", name="Objects on the label").get_by_role(
            "option", selected=True
        )
    ).to_contain_text("code")


ZPL = """^XA
^FO40,40^A0N,40,40^FDLager Halle 3^FS
^FO40,100^BY2^BCN,80,Y,N,N^FDHALLE-3-07^FS
^FO40,240^BAN,60,Y,N,N^FDCODE93DATA^FS
^XZ
"""


def test_a_zpl_file_is_imported_and_its_report_shown(
    console: Session, server: DevServer, human: Api
) -> None:
    page = console.page
    page.get_by_role("button", name="New label").click()
    dialog = page.get_by_role("dialog", name="New label")
    dialog.get_by_role("tab", name="Import a file").click()
    dialog.get_by_label("File", exact=True).set_input_files(
        {"name": "halle3.zpl", "mimeType": "text/plain", "buffer": ZPL.encode()}
    )
    dialog.get_by_role("button", name="Import").click()
    report = dialog.locator(".dz-import-report")
    expect(report).to_contain_text("halle3.zpl (ZPL): 1 label created")
    expect(report.get_by_role("table", name="Import report")).to_contain_text("^BA")
    expect(report.get_by_role("row", name=re.compile("line 4"))).to_contain_text("warning")
    report.get_by_role("link", name=re.compile("in the designer$")).click()
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    painted(page, 1)
    names = page.get_by_role("listbox", name="Objects on the label").get_by_role("option")
    expect(names).to_have_count(2)  # the text and the Code 128; Code 93 was not carried over


def copilot_adds_a_frame(seen: Seen) -> Any:
    return tool_answer(
        seen,
        "propose_patch",
        {
            "operations": [
                {
                    "op": "add",
                    "path": "/objects/-",
                    "value": {
                        "id": "frame",
                        "type": "box",
                        "x_mm": 1,
                        "y_mm": 1,
                        "width_mm": 58,
                        "height_mm": 28,
                        "line_mm": 0.5,
                    },
                }
            ],
            "explanation": "A frame around the label.",
        },
    )


@pytest.fixture(scope="module")
def model(admin: Api) -> Iterator[ModelServer]:
    with ModelServer(api_key="sk-designer", default=copilot_adds_a_frame) as server:
        created = admin.post(
            "/credentials",
            json={
                "ref": "designer-model",
                "kind": "language-model",
                "provider": "openai-chat",
                "model": "gpt-test",
                "endpoint": server.endpoint("openai-chat"),
                "apiKey": "sk-designer",
                "default": True,
            },
        )
        assert created.status_code == 201, created.text
        yield server
        admin.delete("/credentials/designer-model")


def test_a_copilot_proposal_is_shown_as_a_diff_and_accepted(
    console: Session, server: DevServer, human: Api, model: ModelServer
) -> None:
    page = console.page
    label_id = a_label(human, TITLE, BARCODE)
    open_designer(page, server, label_id)
    page.get_by_role("tab", name="Copilot").click()
    page.get_by_label("Instruction").fill("Put a frame around the label")
    page.get_by_role("button", name="Propose a change").click()
    proposal = page.get_by_role("region", name="Proposal")
    expect(proposal).to_contain_text("A frame around the label.")
    expect(proposal).to_contain_text("object frame added")
    added = re.search(r"([\d,]+) dots added", proposal.inner_text())
    assert added and int(added.group(1).replace(",", "")) > 500
    expect(page.locator(".dz-banner")).to_contain_text("Copilot's proposal")
    overlay = page.evaluate(
        """() => {
            const stage = window.Konva.stages.find((s) => s.container().closest('.dz'));
            return stage.find('Image').filter((i) => i.visible()).length;
        }"""
    )
    assert overlay >= 1
    assert len(human.get(f"/labels/{label_id}/versions").json()["items"]) == 2  # nothing saved

    page.get_by_role("button", name="Accept as a new version").click()
    expect(page.get_by_text("Saved as version 3 (a draft).")).to_be_visible()
    expect(page.locator(".dz-banner")).to_be_hidden()
    version = human.get(f"/labels/{label_id}/versions/3").json()
    assert version["status"] == "draft" and version["author"]["actor"] == "human"
    assert "frame" in {o["id"] for o in version["document"]["objects"]}
    asked = model.requests[-1].json
    assert "Put a frame around the label" in asked["messages"][-1]["content"]
    expect(
        page.get_by_role("listbox", name="Objects on the label").get_by_role("option")
    ).to_have_count(3)
