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

from support.browser import Session, console_session, sign_in
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
    expect(page.locator(".dz-findings-count")).to_have_text(re.compile(r"^1 error, "))
    mark = page.evaluate(
        """() => {
            const stage = window.Konva.stages.find((s) => s.container().closest('.dz'));
            const mark = stage.findOne('#finding:code');
            return mark ? mark.name() : null;
        }"""
    )
    assert mark == "finding finding-error"
    page.get_by_role("tab", name=re.compile("^Findings")).click()
    finding = page.locator(".dz-finding.sev-error")
    expect(finding).to_contain_text("label.barcode_clipped")
    expect(finding).to_contain_text("right edge")
    # A finding selects its object; its field in the properties puts it right.
    finding.get_by_role("button", name="code").click()
    objects = page.get_by_role("listbox", name="Objects on the label")
    expect(objects.get_by_role("option", selected=True)).to_contain_text("code")
    page.get_by_role("tab", name="Properties").click()
    x = page.locator(".dz-properties").get_by_label("X (mm)", exact=True)
    expect(x).to_have_value("46")
    x.fill("6")  # typing, without leaving the field: the canvas follows
    expect(page.locator(".dz-findings-count")).to_have_text("no findings")
    assert abs(geometry(page, "code")["box"]["x"] - geometry(page, "title")["box"]["x"]) < 1


SVG = (
    b'<svg xmlns="http://www.w3.org/2000/svg" width="240" height="120">'
    b'<rect x="10" y="10" width="220" height="100" fill="none" stroke="black" stroke-width="12"/>'
    b'<circle cx="120" cy="60" r="30" fill="black"/></svg>'
)
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

    # An SVG logo becomes an image object; the canvas shows the dots the renderer makes of it.
    with page.expect_file_chooser() as chooser:
        page.get_by_role("button", name="Add Image").click()
    count = paints(page)
    chooser.value.set_files({"name": "logo.svg", "mimeType": "image/svg+xml", "buffer": SVG})
    painted(page, count + 1)
    expect(names).to_have_count(3)
    expect(names.first).to_contain_text("logo")
    ink = page.evaluate(
        """() => {
            const stage = window.Konva.stages.find((s) => s.container().closest('.dz'));
            return stage.find('.object').find((r) => r.objectId === 'logo').size();
        }"""
    )
    assert ink["width"] > 50 and ink["height"] > 20  # its box, as the renderer placed it


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


def test_unsaved_work_survives_a_reload_and_a_version_saved_meanwhile_is_not_overwritten(
    console: Session, server: DevServer, human: Api, admin: Api
) -> None:
    page = console.page
    label_id = a_label(human, TITLE, BARCODE)
    open_designer(page, server, label_id)
    objects = page.get_by_role("listbox", name="Objects on the label")
    objects.get_by_role("option", name=re.compile("^title")).click()
    objects.focus()
    for _ in range(3):  # three dots to the right, with the keyboard
        after(page, lambda: page.keyboard.press("ArrowRight"))
    expect(page.locator(".dz-state")).to_contain_text("unsaved changes")

    page.reload()
    painted(page, 1)
    expect(page.locator(".dz-banner")).to_contain_text("Your unsaved changes")
    expect(page.locator(".dz-state")).to_contain_text("unsaved changes")

    # Meanwhile an agent saves version 3: the barcode moves down.
    agent = admin.as_token(admin.service_token("designer")["token"])
    patched = agent.request(
        "PATCH",
        f"/labels/{label_id}/document",
        json={"operations": [{"op": "replace", "path": "/objects/1/y_mm", "value": 12}]},
    )
    assert patched.status_code == 200 and patched.json()["version"] == 3, patched.text

    page.get_by_role("button", name="Save", exact=True).click()
    page.get_by_role("dialog", name="Save as version 3").get_by_role(
        "button", name="Save version"
    ).click()
    conflict = page.get_by_role("dialog", name="Someone saved meanwhile")
    expect(conflict).to_contain_text("Version 3 was saved by agent")
    conflict.get_by_role("button", name="Compare their version with my changes").click()
    expect(conflict.locator(".diff-summary")).to_contain_text("only in version 3")
    expect(conflict.get_by_role("list", name="Document changes")).to_contain_text(
        "object title changed: x_mm"
    )
    assert len(human.get(f"/labels/{label_id}/versions").json()["items"]) == 3  # nothing yet
    after(
        page, lambda: conflict.get_by_role("button", name="Apply my changes to version 3").click()
    )
    expect(page.locator(".dz-banner")).to_contain_text("applied to version 3")
    page.locator(".dz-banner").get_by_role("button", name="Save").click()
    page.get_by_role("dialog", name="Save as version 4").get_by_role(
        "button", name="Save version"
    ).click()
    expect(page.get_by_text("Saved as version 4.")).to_be_visible()
    saved = {
        o["id"]: o for o in human.get(f"/labels/{label_id}/document").json()["document"]["objects"]
    }
    assert abs(saved["title"]["x_mm"] - (6 + 3 * DOT_MM)) < DOT_MM / 2  # mine
    assert saved["code"]["y_mm"] == 12  # theirs
    page.reload()
    painted(page, 1)
    expect(page.locator(".dz-banner")).to_be_hidden()  # nothing left unsaved


def test_objects_are_copied_from_one_label_into_another(
    console: Session, server: DevServer, human: Api
) -> None:
    page = console.page
    variable = {"name": "lot", "type": "string", "sample": "L-42"}
    source = a_label(human, TITLE)
    lot_code = {**BARCODE, "expression": "'LOT ' + lot"}
    del lot_code["content"]
    patched = human.request(
        "PATCH",
        f"/labels/{source}/document",
        json={
            "operations": [
                {"op": "add", "path": "/variables/-", "value": variable},
                {"op": "add", "path": "/objects/-", "value": lot_code},
            ]
        },
    )
    assert patched.status_code == 200, patched.text
    target = a_label(human, TITLE)
    open_designer(page, server, source)
    objects = page.get_by_role("listbox", name="Objects on the label")
    objects.get_by_role("option", name=re.compile("^code")).click()
    objects.focus()
    page.keyboard.press("Control+c")
    open_designer(page, server, target)
    page.get_by_role("listbox", name="Objects on the label").focus()
    after(page, lambda: page.keyboard.press("Control+v"))
    pasted = page.get_by_role("listbox", name="Objects on the label").get_by_role("option")
    expect(pasted).to_have_count(2)
    expect(pasted.first).to_contain_text("LOT L-42")  # its variable came along
    page.keyboard.press("Control+s")
    page.get_by_role("dialog", name="Save as version 3").get_by_role(
        "button", name="Save version"
    ).click()
    expect(page.get_by_text("Saved as version 3.")).to_be_visible()
    document = human.get(f"/labels/{target}/document").json()["document"]
    assert [o["id"] for o in document["objects"]] == ["title", "code"]
    assert document["variables"] == [{**variable, "required": False}]


RULES = """async () => {
  const base = document.querySelector('script[type=module][src$="/app.js"]').src
    .replace(/app\\.js$/, '');
  const load = (name) => import(base + 'designer/' + name + '.js');
  const [units, history, merge, gs1, snapping, model] = await Promise.all(
    ['units', 'history', 'merge', 'gs1', 'snapping', 'model'].map(load));
  const out = {};
  // Every dot, at every density, comes back from the mm the designer writes.
  let wrong = 0;
  for (const dpi of [203, 300, 600]) {
    for (let dots = -400; dots < 4000; dots += 1) {
      if (units.mmToDots(units.dotsToMm(dots, dpi), dpi) !== dots) wrong += 1;
    }
  }
  out.roundTrips = wrong;
  out.tidy = [units.dotsToMm(120, 203), units.dotsToMm(81, 203), units.dotsToMm(59, 300)];
  // History: 150 steps undone to the start; typing in one field is one step.
  const h = new history.History({ n: 0 });
  for (let n = 1; n <= 150; n += 1) h.push({ n }, `step ${n}`);
  let undone = 0;
  while (h.undo()) undone += 1;
  const typed = new history.History({ v: '' });
  ['a', 'ab', 'abc'].forEach((v, i) => typed.push({ v }, 'Type', 'field:x', 1000 + i * 100));
  out.history = [undone, h.document.n, typed.steps.length, typed.undo().v];
  // A three-way merge by object id.
  const base0 = { size: {width_mm: 50, height_mm: 30}, dpi: 203, variables: [],
    objects: [{id: 'a', x_mm: 1}, {id: 'b', x_mm: 2}, {id: 'c', x_mm: 3}] };
  const mine = { ...base0, objects: [{id: 'a', x_mm: 9}, {id: 'b', x_mm: 2}, {id: 'n', x_mm: 5}] };
  const theirs = { ...base0,
    objects: [{id: 'a', x_mm: 1}, {id: 'b', x_mm: 7}, {id: 'c', x_mm: 3, y_mm: 1}] };
  const merged = merge.mergeDocuments(base0, mine, theirs);
  out.merged = [merged.document.objects, merged.conflicts];
  out.operations = merge.operations(base0, mine);
  // GS1: names, check digits, dates.
  out.gs1 = gs1.parseElementString('(01)09501101530003(17)271301(10)AB12').parts.map(
    (p) => [p.ai, p.title, p.problem]);
  out.check = [gs1.checkDigit('0950110153000'), gs1.withCheckDigit('340123451234567891')];
  // Snapping: to another object's edge within the threshold, else to the grid.
  out.snap = [
    snapping.snap({moving: [0, 0, 10, 10], dx: 47, dy: 0, others: [[60, 40, 80, 50]],
      label: [200, 100], grid: 8, threshold: 4}),
    snapping.snap({moving: [0, 0, 10, 10], dx: 30, dy: 2, others: [], label: [200, 100],
      grid: 8, threshold: 4}),
  ];
  // Arranging: align to the left edge, distribute three boxes evenly.
  const doc = { dpi: 203, size: {width_mm: 50, height_mm: 30}, objects: [
    {id: 'p', x_mm: 2, y_mm: 0}, {id: 'q', x_mm: 10, y_mm: 0}, {id: 'r', x_mm: 30, y_mm: 0}] };
  const boxes = new Map([['p', [16, 0, 36, 8]], ['q', [80, 0, 90, 8]], ['r', [240, 0, 260, 8]]]);
  out.align = model.align(doc, ['p', 'q', 'r'], boxes, 'left', [400, 240])
    .objects.map((o) => o.x_mm);
  out.distribute = model.distribute(doc, ['p', 'q', 'r'], boxes, 'horizontal')
    .objects.map((o) => units.mmToDots(o.x_mm, 203));
  out.front = model.reorder(doc, ['p'], 'front').objects.map((o) => o.id);
  // The service's PNG read directly gives the dots the browser's own decoder gives.
  const layout = await load('layout');
  const small = {size: {width_mm: 31.1, height_mm: 20}, dpi: 203, objects: [
    {id: 't', type: 'text', x_mm: 1, y_mm: 1, content: 'Etikett 123'},
    {id: 'q', type: 'barcode', symbology: 'qr', x_mm: 18, y_mm: 2, content: 'Q'}]};
  const answer = await (await fetch('/api/v1/labels/layout', {method: 'POST',
    headers: {'content-type': 'application/json', 'X-Etikett-CSRF': '1'},
    body: JSON.stringify({document: small})})).json();
  const raster = await layout.decodeRaster(answer.png_base64);
  const bytes = Uint8Array.from(atob(answer.png_base64), (c) => c.charCodeAt(0));
  const bitmap = await createImageBitmap(new Blob([bytes], {type: 'image/png'}));
  const canvas = document.createElement('canvas');
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  const context = canvas.getContext('2d');
  context.drawImage(bitmap, 0, 0);
  const data = context.getImageData(0, 0, bitmap.width, bitmap.height).data;
  let differ = 0;
  let ink = 0;
  for (let i = 0; i < raster.black.length; i += 1) {
    ink += raster.black[i];
    if (raster.black[i] !== (data[i * 4] < 128 ? 1 : 0)) differ += 1;
  }
  out.decoded = [raster.width, raster.height, bitmap.width, bitmap.height, differ, ink > 100];
  return out;
}"""


def test_the_designers_own_rules_in_the_browser(console: Session) -> None:
    found = console.page.evaluate(RULES)
    assert found["roundTrips"] == 0
    assert found["tidy"] == [15, 10.1, 5]  # the mm a person would write, to the very dot
    assert found["history"] == [150, 0, 2, ""]
    objects, conflicts = found["merged"]
    assert objects == [
        {"id": "a", "x_mm": 9},  # mine
        {"id": "b", "x_mm": 7},  # theirs
        {"id": "c", "x_mm": 3, "y_mm": 1},  # I deleted it, they changed it: kept, and said so
        {"id": "n", "x_mm": 5},  # mine, new
    ]
    assert conflicts == ["object c: you deleted what the other side changed; it is kept"]
    assert found["operations"] == [
        {"op": "remove", "path": "/objects/2"},
        {"op": "replace", "path": "/objects/0", "value": {"id": "a", "x_mm": 9}},
        {"op": "add", "path": "/objects/-", "value": {"id": "n", "x_mm": 5}},
    ]
    assert found["gs1"] == [
        ["01", "GTIN (trade item)", None],
        ["17", "Expiration date", "Not a date (YYMMDD)."],
        ["10", "Batch or lot number", None],
    ]
    assert found["check"] == ["3", "340123451234567895"]
    to_edge, to_grid = found["snap"]
    assert (to_edge["dx"], to_edge["guides"]) == (50, [{"axis": "x", "at": 60}])
    assert (to_grid["dx"], to_grid["dy"]) == (32, 2)  # y hardly moved: it stays
    assert found["align"] == [2, 2, 2]
    assert found["distribute"] == [16, 133, 240]  # equal gaps of 97 dots between the boxes
    assert found["front"] == ["q", "r", "p"]
    width, height, *browser, differ, inked = found["decoded"]
    assert (width, height) == tuple(browser) == (249, 160)  # 31.1 mm: a width not whole bytes
    assert differ == 0 and inked
