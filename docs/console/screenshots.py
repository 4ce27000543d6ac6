"""Takes the README's screenshots of the console (`make screenshots`): a fresh local service with
a Runner, a printer simulator and some work done in it, photographed by Debian's chromium.

Run from the repository root; writes docs/console/*.png. Nothing here is a test.
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests"))

from e2e.runners import TUNING, RunnerProcess, eventually, start_enrolled  # noqa: E402
from etikett_runner.printer_sim import PrinterSimulator  # noqa: E402
from playwright.sync_api import Page, expect  # noqa: E402

from support.browser import console_session, running_browser  # noqa: E402
from support.client import PASSWORD, Api  # noqa: E402
from support.model_server import ModelServer, Seen, tool_answer  # noqa: E402
from support.server import DevServer  # noqa: E402

OUT = Path(__file__).resolve().parent
VIEWPORT = {"width": 1280, "height": 800}


def seed(server: DevServer, simulator: PrinterSimulator, workdir: Path) -> dict[str, str]:
    anonymous = Api(server.url)
    setup = anonymous.post("/auth/setup", json={"username": "admin", "password": PASSWORD})
    admin = anonymous.as_token(setup.json()["token"])
    admin.create_user(["designer", "operator", "approver"], username="ines")
    ines = admin.as_token(admin.login("ines"))

    made = {}
    for vorlage, name in [
        ("shelf-label", "Regal Molkerei"),
        ("shipping-label", "Versand Paket"),
        ("gs1-logistic-label", "SSCC Palette"),
        ("asset-tag-qr", "Inventar"),
        ("warehouse-location", "Lagerplatz"),
        ("udi-datamatrix", "UDI Katheter"),
    ]:
        label = ines.post("/labels/from-vorlage", json={"vorlageId": vorlage, "name": name}).json()
        made[vorlage] = label["id"]
        if vorlage != "udi-datamatrix":
            ines.post(f"/labels/{label['id']}/status", json={"version": 1, "status": "approved"})
    agent = admin.as_token(admin.service_token("designer", subject="label-bot")["token"])
    agent.request(
        "PATCH",
        f"/labels/{made['shelf-label']}/document",
        json={
            "operations": [{"op": "replace", "path": "/objects/0/x_mm", "value": 8}],
            "comment": "Indent the product name",
        },
    )

    process = RunnerProcess(workdir / "runner", workdir / "runner.log")
    group = start_enrolled(process, server, admin, "Halle 1", *TUNING)
    runner = eventually(
        lambda: [r for r in admin.get("/runners").json()["items"] if r["status"] == "online"], 30
    )[0]
    admin.post(
        "/printers",
        json={
            "name": "Zebra Halle 1",
            "runner_id": runner["id"],
            "uri": f"tcp://127.0.0.1:{simulator.port}",
            "language": "zpl",
            "dpi": 203,
        },
    )
    flow = admin.post(
        "/flows",
        json={
            "name": "Versand aus dem Lager",
            "description": "A CSV in the inbox becomes shipping labels",
            "document": {
                "nodes": [
                    {
                        "id": "inbox",
                        "type": "trigger.folder",
                        "path": "/srv/labels/in",
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
                        "cases": [{"when": "record.qty > 0", "wires": ["log"]}],
                        "otherwise": ["skip"],
                    },
                    {"id": "log", "type": "action.log", "message": "'parcel ' + record.ref"},
                    {"id": "skip", "type": "action.log", "message": "'empty order'"},
                ],
                "samples": [{"ref": "A-1", "qty": "2"}],
            },
        },
    ).json()
    parcels = ines.post(
        "/flows",
        json={
            "name": "Paketlabels Halle 1",
            "description": "Orders from the ERP's export folder become shipping labels",
            "document": parcels_flow(made["shipping-label"]),
        },
    ).json()
    # A second version as an agent would propose it: the packaging's weight counted, heavier
    # parcels to the freight desk.
    agent.request(
        "PATCH",
        f"/flows/{parcels['id']}/document",
        json={
            "operations": [
                {
                    "op": "replace",
                    "path": "/nodes/1/values/weight",
                    "value": "double(record.weight_g) / 1000.0 + 0.25",
                },
                {
                    "op": "add",
                    "path": "/nodes/2/cases/-",
                    "value": {"when": "record.weight > 31.5", "wires": ["freight"]},
                },
                {
                    "op": "add",
                    "path": "/nodes/-",
                    "value": {
                        "id": "freight",
                        "type": "action.http",
                        "url": "https://erp.example.com/api/freight",
                        "body": "record",
                        "ui": {"x": 690, "y": 320},
                    },
                },
            ],
            "comment": "Parcels over 31.5 kg to the freight desk",
        },
    )
    made["parcels"] = parcels["id"]
    other = admin.post("/runner-groups", json={"name": "Halle 2"}).json()
    deployment = ines.post(
        "/deployments",
        json={
            "flow_id": flow["id"],
            "version": 1,
            "stages": [{"group_ids": [group["id"]]}, {"group_ids": [other["id"]]}],
        },
    ).json()
    made.update(flow=flow["id"], deployment=deployment["id"], runner=runner["id"])
    made["process"] = process  # type: ignore[assignment]
    return made


def copilot_adds_a_handling_mark(seen: Seen) -> Any:
    """What the screenshots' language model proposes: a "this side up" box above the SSCC."""
    return tool_answer(
        seen,
        "propose_patch",
        {
            "operations": [
                {
                    "op": "add",
                    "path": "/objects/-",
                    "value": {
                        "id": "handling_box",
                        "type": "box",
                        "x_mm": 66,
                        "y_mm": 3,
                        "width_mm": 32,
                        "height_mm": 9,
                        "line_mm": 0.6,
                        "corner_radius_mm": 1.5,
                    },
                },
                {
                    "op": "add",
                    "path": "/objects/-",
                    "value": {
                        "id": "handling_text",
                        "type": "text",
                        "x_mm": 66,
                        "y_mm": 4.5,
                        "width_mm": 32,
                        "align": "center",
                        "content": "THIS SIDE UP",
                        "size_pt": 9,
                        "weight": 800,
                    },
                },
            ],
            "explanation": "A boxed THIS SIDE UP mark in the top right corner, clear of the "
            "sender block.",
        },
    )


def designer_labels(ines: Api) -> dict[str, str]:
    """A label for each designer screenshot: one to design, one with a barcode past the edge."""
    made = {}
    design = ines.post(
        "/labels/from-vorlage", json={"vorlageId": "gs1-logistic-label", "name": "SSCC Halle 1"}
    ).json()
    made["design"] = design["id"]
    clipped = ines.post(
        "/labels/from-vorlage",
        json={"vorlageId": "product-label-ean13", "name": "Artikel Apfelsaft"},
    ).json()
    document = ines.get(f"/labels/{clipped['id']}/document").json()["document"]
    index = next(i for i, o in enumerate(document["objects"]) if o["type"] == "barcode")
    ines.request(
        "PATCH",
        f"/labels/{clipped['id']}/document",
        json={
            "operations": [
                {
                    "op": "replace",
                    "path": f"/objects/{index}/y_mm",
                    "value": document["objects"][index]["y_mm"] + 14,
                }
            ],
            "comment": "Moved the EAN down",
        },
    )
    made["clipped"] = clipped["id"]
    made["clipped_barcode"] = document["objects"][index]["id"]
    return made


def painted(page: Page) -> None:
    page.wait_for_function("() => Number(document.querySelector('.dz')?.dataset.painted || 0) >= 1")


def shoot_designer(page: Page, server: DevServer, made: dict[str, str]) -> None:
    """The designer: a GS1 logistics label with its SSCC barcode selected, a clipped barcode's
    finding, and a Copilot proposal as a diff on the canvas."""
    page.goto(f"{server.url}/console/labels/{made['design']}/design")
    painted(page)
    objects = page.get_by_role("listbox", name="Objects on the label")
    objects.get_by_role("option", name=re.compile("^sscc_barcode")).click()
    page.locator(".dz-gs1").wait_for()
    page.locator(".dz-right").evaluate("(panel) => panel.scrollTo(0, 170)")
    shoot(page, "designer")

    page.goto(f"{server.url}/console/labels/{made['clipped']}/design")
    painted(page)
    page.get_by_role("tab", name=re.compile("^Findings")).click()
    page.locator(".dz-finding.sev-error").get_by_role("button").first.click()
    shoot(page, "designer-findings")

    page.goto(f"{server.url}/console/labels/{made['design']}/design")
    painted(page)
    page.get_by_role("tab", name="Copilot").click()
    page.get_by_label("Instruction").fill("Add a THIS SIDE UP handling mark top right")
    page.get_by_role("button", name="Propose a change").click()
    expect(page.get_by_role("region", name="Proposal")).to_be_visible()
    shoot(page, "designer-copilot")


def parcels_flow(label_id: str) -> dict[str, object]:
    """The editor's example: a folder of CSV orders → shaped → routed → a shipping label, or a
    note in the run when the order has nothing to ship."""
    fields = {
        name: f"record.{name}"
        for name in (
            "recipient_name",
            "recipient_street",
            "recipient_postcode",
            "recipient_city",
            "tracking_number",
        )
    }
    return {
        "nodes": [
            {
                "id": "inbox",
                "type": "trigger.folder",
                "name": "ERP export",
                "path": "/srv/erp/out",
                "pattern": "orders-*.csv",
                "format": "csv",
                "delimiter": ";",
                "wires": ["shape"],
                "ui": {"x": 30, "y": 150},
            },
            {
                "id": "shape",
                "type": "logic.set",
                "name": "Weight and parcels",
                "values": {
                    "weight": "double(record.weight_g) / 1000.0",
                    "parcels": "int(record.parcels)",
                },
                "wires": ["route"],
                "ui": {"x": 250, "y": 150},
            },
            {
                "id": "route",
                "type": "logic.switch",
                "name": "Anything to ship?",
                "cases": [{"when": "record.parcels > 0", "wires": ["label"]}],
                "otherwise": ["note"],
                "ui": {"x": 470, "y": 150},
            },
            {
                "id": "label",
                "type": "action.print",
                "name": "Shipping label",
                "label": label_id,
                "printer": "dock",
                "copies": "record.parcels",
                "variables": {
                    **fields,
                    "sender_name": "context.sender",
                    "sender_street": "'Hafenstraße 21'",
                    "sender_postcode": "'20457'",
                    "sender_city": "'Hamburg'",
                    "weight_kg": "record.weight",
                },
                "wires": ["done"],
                "ui": {"x": 690, "y": 70},
            },
            {
                "id": "note",
                "type": "action.log",
                "name": "Nothing to ship",
                "message": "'order ' + record.order + ' has no parcels'",
                "level": "warning",
                "ui": {"x": 690, "y": 230},
            },
            {
                "id": "done",
                "type": "action.http",
                "name": "Tell the ERP",
                "url": "https://erp.example.com/api/printed",
                "body": '{"order": record.order, "tracking": record.tracking_number}',
                "ui": {"x": 910, "y": 70},
            },
        ],
        "samples": [
            {
                "order": "SO-4711",
                "weight_g": "2400",
                "parcels": "2",
                "recipient_name": "Erika Mustermann",
                "recipient_street": "Heidestraße 17",
                "recipient_postcode": "51147",
                "recipient_city": "Köln",
                "tracking_number": "ET123456785DE",
            }
        ],
    }


RECORDS = "\n".join(
    [
        "order;weight_g;parcels;recipient_name;recipient_street;recipient_postcode;"
        "recipient_city;tracking_number",
        "SO-4711;2400;2;Erika Mustermann;Heidestraße 17;51147;Köln;ET123456785DE",
        "SO-4712;800;0;Max Muster;Am Markt 1;10115;Berlin;ET123456799DE",
        "SO-4713;12500;1;Beispiel AG;Industriestraße 5;70565;Stuttgart;ET123456802DE",
    ]
)


def shoot(page: Page, name: str) -> None:
    page.wait_for_load_state("networkidle")
    time.sleep(0.4)
    page.screenshot(path=str(OUT / f"{name}.png"))
    print("wrote", OUT / f"{name}.png")


def main() -> None:
    workdir = Path(tempfile.mkdtemp(prefix="etikett-shots-"))
    server = DevServer(workdir / "home")
    server.start()
    with (
        PrinterSimulator(port=0, dpi=203, out_dir=None, model="ZT411-203dpi") as simulator,
        ModelServer(default=copilot_adds_a_handling_mark) as model,
    ):
        made = seed(server, simulator, workdir)
        anonymous = Api(server.url)
        admin = anonymous.as_token(anonymous.login("admin"))
        credential = admin.post(
            "/credentials",
            json={
                "ref": "copilot",
                "kind": "language-model",
                "provider": "openai-chat",
                "model": "local-model",
                "endpoint": model.endpoint("openai-chat"),
                "default": True,
            },
        )
        assert credential.status_code == 201, credential.text
        try:
            with running_browser() as browser, console_session(browser, VIEWPORT) as session:
                page = session.page
                page.goto(server.url + "/")
                page.get_by_label("Username").fill("ines")
                page.get_by_label("Password").fill(PASSWORD)
                page.get_by_role("button", name="Sign in").click()
                expect(page.get_by_role("heading", level=1, name="Labels")).to_be_visible()
                expect(page.locator(".thumb img")).to_have_count(6)
                shoot(page, "labels")

                page.goto(f"{server.url}/console/labels/{made['shelf-label']}")
                page.get_by_role("tab", name="Compare versions").click()
                expect(page.locator(".diff-summary")).to_be_visible()
                shoot(page, "diff")

                page.goto(f"{server.url}/console/labels/{made['warehouse-location']}/print")
                page.get_by_label("Printer").select_option("Zebra Halle 1")
                page.get_by_role("button", name="Print", exact=True).click()
                expect(page.locator(".job")).to_have_attribute("data-final", re.compile("."))
                shoot(page, "print")

                page.goto(f"{server.url}/console/flows/{made['flow']}")
                page.locator(".graph .node").first.focus()
                shoot(page, "flow")

                # The flow editor: the print node chosen, its settings from the registry.
                page.goto(f"{server.url}/console/flows/{made['parcels']}/edit")
                expect(page.locator(".x6-node")).to_have_count(7)
                body = page.locator('.x6-node[data-cell-id="label"] .fe-body').bounding_box()
                assert body is not None
                page.mouse.click(body["x"] + 40, body["y"] + 12)
                expect(page.locator(".fe-node-head code")).to_have_text("label")
                shoot(page, "flow-editor")

                page.get_by_role("tab", name="Dry run").click()
                page.get_by_label("Records (JSON, JSON lines or CSV with a header row)").fill(
                    RECORDS
                )
                page.get_by_label("Context (JSON object)").fill(
                    '{"sender": "Etikett Versand GmbH"}'
                )
                page.get_by_role("button", name="Dry run", exact=True).click()
                expect(page.locator(".fe-previews img")).to_have_count(2)
                for _ in range(3):
                    page.get_by_role("button", name="Next step ▶").click()
                page.locator(".fe-bottom .tab-panels").evaluate("e => e.scrollTo(0, 0)")
                shoot(page, "flow-editor-dry-run")

                page.get_by_role("tab", name="Versions").click()
                page.get_by_role("button", name="Changes of v2").click()
                expect(page.get_by_role("dialog")).to_be_visible()
                shoot(page, "flow-editor-diff")

                page.goto(f"{server.url}/console/deployments/{made['deployment']}")
                shoot(page, "deployment")

                page.goto(f"{server.url}/console/runners")
                shoot(page, "runners")

                page.goto(f"{server.url}/console/audit")
                shoot(page, "audit")

                # After the labels page's picture: these labels would show on it.
                designs = designer_labels(anonymous.as_token(anonymous.login("ines")))
                shoot_designer(page, server, designs)
        finally:
            made["process"].stop()  # type: ignore[attr-defined]
            server.stop()


if __name__ == "__main__":
    main()
