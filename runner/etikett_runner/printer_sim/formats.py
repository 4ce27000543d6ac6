"""Label formats: the `^` commands of one `^XA … ^XZ` → a `LabelFormat`, and its 1-bit raster.

Understood: `^PW`, `^LL`, `^LH`, `^FO`, `^GF`, `^FS`, `^PQ`. Settings that only steer the print
engine (`^MN`, `^MD`, `^PR`, …) are accepted silently; anything else (text, barcodes, `^FT`, …) is
not drawn and noted as a warning on the label. As on a printer, `^PW`, `^LL` and `^LH` stay in
effect for later formats until changed, and the label is clipped to the printhead width.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

from PIL import Image, ImageChops

from etikett_runner.printer_sim.graphics import Graphic, GraphicError, parse_gf
from etikett_runner.printer_sim.stream import Command

# Commands that change how a label is printed, not what: no effect on the raster.
_ENGINE_ONLY = frozenset(
    {"^MN", "^MD", "^PR", "^MT", "^MM", "^CI", "^JU", "^JZ", "^FX", "^PM", "^SS", "^MF", "^JM"}
)


@dataclass(frozen=True)
class Layout:
    print_width: int  # ^PW, dots
    label_length: int  # ^LL, dots
    home: tuple[int, int] = (0, 0)  # ^LH


class LayoutStore:
    """The layout settings the printer keeps between formats (and connections)."""

    def __init__(self, layout: Layout) -> None:
        self._layout = layout
        self._lock = threading.Lock()

    def get(self) -> Layout:
        with self._lock:
            return self._layout

    def set(self, layout: Layout) -> None:
        with self._lock:
            self._layout = layout


@dataclass(frozen=True)
class Placed:
    x: int
    y: int
    graphic: Graphic


@dataclass
class LabelFormat:
    width: int
    height: int
    copies: int
    graphics: list[Placed]
    errors: list[GraphicError]  # a format with a dropped graphic is not printed
    warnings: list[str]
    received_at: datetime

    @property
    def compression(self) -> str | None:
        kinds = sorted({placed.graphic.compression for placed in self.graphics})
        return kinds[0] if len(kinds) == 1 else ("mixed" if kinds else None)

    @property
    def crc_ok(self) -> bool | None:
        checked = [p.graphic.crc_ok for p in self.graphics if p.graphic.crc_ok is not None]
        return all(checked) if checked else None


@dataclass
class _Open:
    layout: Layout
    origin: tuple[int, int] = (0, 0)
    copies: int = 1
    graphics: list[Placed] = field(default_factory=list)
    errors: list[GraphicError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


class FormatBuilder:
    """Per connection: feed it the `^` commands, get a `LabelFormat` at each `^XZ`."""

    def __init__(self, store: LayoutStore, head_width: int, max_length: int) -> None:
        self._store = store
        self._head_width = head_width
        self._max_length = max_length
        self._open: _Open | None = None

    @property
    def in_format(self) -> bool:
        return self._open is not None

    def handle(self, command: Command) -> LabelFormat | GraphicError | None:
        name, params = command.name, command.params
        if name == "^XA":
            self._open = _Open(self._store.get())  # a second ^XA starts over, as on a printer
            return None
        current = self._open
        if current is None:
            return None  # format commands outside ^XA … ^XZ do nothing
        if name == "^XZ":
            self._open = None
            return self._finish(current)
        if name == "^GF":
            try:
                graphic = parse_gf(params, command.data)
            except GraphicError as error:
                current.errors.append(error)
                return error
            home = current.layout.home
            x, y = home[0] + current.origin[0], home[1] + current.origin[1]
            current.graphics.append(Placed(x, y, graphic))
        elif name == "^FO":
            current.origin = _pair(params, current.origin)
        elif name == "^PW":
            width = _int(params, current.layout.print_width)
            self._remember(current, replace(current.layout, print_width=width))
        elif name == "^LL":
            length = _int(params, current.layout.label_length)
            self._remember(current, replace(current.layout, label_length=length))
        elif name == "^LH":
            self._remember(current, replace(current.layout, home=_pair(params, (0, 0))))
        elif name == "^PQ":
            current.copies = max(1, _int(params, 1))
        elif name not in _ENGINE_ONLY and name != "^FS" and name.startswith("^"):
            note = f"{name} ignored: the simulator draws ^GF graphics only"
            if note not in current.warnings:
                current.warnings.append(note)
        return None

    def _remember(self, current: _Open, layout: Layout) -> None:
        if layout == current.layout:
            return  # sent again with every label: nothing changes
        current.layout = layout
        self._store.set(layout)

    def _finish(self, current: _Open) -> LabelFormat:
        layout, warnings = current.layout, current.warnings
        width, height = layout.print_width, layout.label_length
        if width > self._head_width:
            warnings.append(
                f"^PW{width} is wider than the printhead: clipped to {self._head_width}"
            )
            width = self._head_width
        if height > self._max_length:
            warnings.append(
                f"^LL{height} is longer than the maximum: clipped to {self._max_length}"
            )
            height = self._max_length
        return LabelFormat(
            width=max(1, width),
            height=max(1, height),
            copies=current.copies,
            graphics=current.graphics,
            errors=current.errors,
            warnings=warnings,
            received_at=datetime.now(UTC),
        )


def compose(label: LabelFormat) -> Image.Image:
    """The label as printed: mode "1", black = 0; graphics add black dots, white is transparent."""
    whole = (0, 0, label.width, label.height)
    canvas: Image.Image | None = None  # made by the first graphic on the label
    for placed in label.graphics:
        graphic = placed.graphic
        size = (graphic.width, graphic.rows)
        image = Image.frombytes("1", size, graphic.raw, "raw", "1;I")  # 1 bits → black (0)
        box = (
            max(placed.x, 0),
            max(placed.y, 0),
            min(placed.x + graphic.width, label.width),
            min(placed.y + graphic.rows, label.height),
        )
        inner: tuple[int, int, int, int] | None = None  # the part on the label, graphic coords
        if box[0] < box[2] and box[1] < box[3]:
            inner = (box[0] - placed.x, box[1] - placed.y, box[2] - placed.x, box[3] - placed.y)
            part = image if inner == (0, 0, *size) else image.crop(inner)  # a new image either way
            if canvas is None and box == whole:  # the whole label (what a renderer sends)
                canvas = part
            elif canvas is None:  # white everywhere under it: the same dots as the AND, copied
                canvas = Image.new("1", (label.width, label.height), 1)
                canvas.paste(part, box)
            else:
                canvas.paste(ImageChops.logical_and(canvas.crop(box), part), box)
        # Only black dots that fall off the label matter (row padding past ^PW is normal).
        if inner != (0, 0, *size) and _black_outside(graphic, inner):
            note = f"graphic at {placed.x},{placed.y} has black dots outside the label: clipped"
            if note not in label.warnings:
                label.warnings.append(note)
    return canvas if canvas is not None else Image.new("1", (label.width, label.height), 1)


def _black_outside(graphic: Graphic, kept: tuple[int, int, int, int] | None) -> bool:
    ink = Image.frombytes("1", (graphic.width, graphic.rows), graphic.raw, "raw", "1")
    if kept is None:
        return ink.getbbox() is not None
    outside = ink.copy()
    outside.paste(0, kept)  # blank the part that was printed; whatever ink remains was cut off
    return outside.getbbox() is not None


def _int(params: str, default: int) -> int:
    """The first integer parameter; a missing or bad one keeps the default, as on a printer."""
    return _pair(params, (default, 0))[0]


def _pair(params: str, default: tuple[int, int]) -> tuple[int, int]:
    values = params.split(",", 2)
    x = values[0].strip()
    y = values[1].strip() if len(values) > 1 else ""
    return (
        int(x) if x.isascii() and x.isdigit() else default[0],
        int(y) if y.isascii() and y.isdigit() else default[1],
    )
