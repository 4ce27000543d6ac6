"""The flow editor's canvas as a person's mouse uses it: node types dragged from the palette,
wires dragged from an output port to an input, nodes clicked. X6 draws SVG, so these move the
real mouse over the real elements rather than dispatching events at them."""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect


def _centre(box: dict[str, float] | None) -> tuple[float, float]:
    assert box is not None, "the element is not shown"
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def drag_type(page: Page, node_type: str, x: float, y: float) -> None:
    """Drags `node_type` from the palette to (x, y) of the canvas, in its own pixels."""
    item = page.locator(f'.fe-type[data-type="{node_type}"]')
    item.scroll_into_view_if_needed()
    start_x, start_y = _centre(item.bounding_box())
    canvas = page.locator(".fe-graph").bounding_box()
    assert canvas is not None
    before = page.locator(".x6-node").count()
    page.mouse.move(start_x, start_y)
    page.mouse.down()
    page.mouse.move(start_x + 30, start_y + 5, steps=3)
    page.mouse.move(canvas["x"] + x, canvas["y"] + y, steps=8)
    page.mouse.up()
    expect(page.locator(".x6-node")).to_have_count(before + 1)


def port_ids(page: Page, node_id: str) -> list[str]:
    return list(
        page.locator(f'.x6-node[data-cell-id="{node_id}"] [port]').evaluate_all(
            "ports => ports.map((p) => p.getAttribute('port'))"
        )
    )


def wire(page: Page, source: str, port: str, target: str) -> None:
    """Drags a wire from `port` of `source` to the input of `target`."""
    start = page.locator(f'.x6-node[data-cell-id="{source}"] [port="{port}"]').first
    end = page.locator(f'.x6-node[data-cell-id="{target}"] [port="in"]').first
    before = page.locator(".x6-edge").count()
    sx, sy = _centre(start.bounding_box())
    tx, ty = _centre(end.bounding_box())
    page.mouse.move(sx, sy)
    page.mouse.down()
    page.mouse.move((sx + tx) / 2, (sy + ty) / 2, steps=6)
    page.mouse.move(tx, ty, steps=4)
    page.mouse.up()
    expect(page.locator(".x6-edge")).to_have_count(before + 1)


def click_node(page: Page, node_id: str) -> None:
    """Chooses a node as a click does, and waits for its settings."""
    body = page.locator(f'.x6-node[data-cell-id="{node_id}"] .fe-body')
    x, y = _centre(body.bounding_box())
    page.mouse.click(x - 40, y - 8)
    expect(page.locator(".fe-node-head code")).to_have_text(node_id)


def node(page: Page, node_id: str) -> Any:
    return page.locator(f'.x6-node[data-cell-id="{node_id}"]')
