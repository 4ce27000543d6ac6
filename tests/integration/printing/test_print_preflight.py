"""A print of an approved version whose layout has error findings now is refused through the
gateway (422 `label.has_errors`), with nothing queued and no serial taken.

Approval refuses error findings, so an approved version gets one only when what it is laid out
with changes: here a counter outgrows its text box. Findings are kept per warm process (a print
does not read its counters twice), so the print that sees the wider serial is the first one in a
fresh process, as after a Lambda container is replaced: the test restarts its own server.
"""

from __future__ import annotations

from pathlib import Path

from support.client import PASSWORD, Api, problem, unique
from support.server import DevServer

from .test_print_api import Site


def test_a_print_whose_serial_outgrows_its_box_is_refused(tmp_path: Path) -> None:
    server = DevServer(tmp_path / "home")
    server.start()
    try:
        setup = Api(server.url).post("/auth/setup", json={"username": "p", "password": PASSWORD})
        admin = Api(server.url, setup.json()["token"])
        site = Site(admin, server, tmp_path)
        operator = admin.user_session(["operator"])[1]
        counter = unique("serial").replace("-", "_")
        created = operator.post("/counters", json={"name": counter, "start": 9})
        assert created.status_code == 201, created.text
        designer = admin.user_session(["designer"])[1]
        label = designer.post(
            "/labels/from-dimensions",
            json={"name": unique("serial"), "width_mm": 50, "height_mm": 25},
        ).json()
        box = {  # one digit fits in 3 mm at 9 pt, two do not
            "id": "serial",
            "type": "text",
            "x_mm": 2,
            "y_mm": 2,
            "size_pt": 9,
            "width_mm": 3,
            "expression": f"string(counters.{counter})",
        }
        patched = designer.request(
            "PATCH",
            f"/labels/{label['id']}/document",
            json={"operations": [{"op": "add", "path": "/objects/-", "value": box}]},
        )
        assert patched.status_code == 200 and patched.json()["findings"] == [], patched.text
        approver = admin.user_session(["approver"])[1]
        approved = approver.post(
            f"/labels/{label['id']}/status", json={"version": 2, "status": "approved"}
        )
        assert approved.status_code == 200, approved.text
        order = {"label_id": label["id"], "printer": site.printer["name"]}
        first = operator.post("/print", json=order)
        assert first.status_code == 202, first.text  # takes 9; the next serial is 10
        assert operator.get(f"/counters/{counter}").json()["current"] == 9

        assert server.stop() == 0
        server.start()
        admin, operator = Api(server.url, admin.token), Api(server.url, operator.token)
        refused = operator.post("/print", json=order)
        body = problem(refused, 422, "label.has_errors")
        assert body["params"]["label_id"] == label["id"] and body["params"]["version"] == 2
        assert [f["code"] for f in body["params"]["findings"]] == ["label.text_overflow"]
        assert body["params"]["findings"][0]["object_id"] == "serial"
        assert "printed" in body["detail"]
        archive = operator.get("/print-archive", params={"label_id": label["id"]}).json()
        assert [entry["job_id"] for entry in archive["items"]] == [first.json()["job_id"]]
        assert operator.get(f"/counters/{counter}").json()["current"] == 9
    finally:
        if server.process is not None and server.process.poll() is None:
            server.stop()
