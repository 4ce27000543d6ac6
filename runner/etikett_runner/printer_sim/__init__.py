"""A simulated Zebra label printer: a real TCP server speaking the ZPL subset Etikett sends.

Users test without hardware (`etikett-printer-sim`), and tests use it as the real peer:

    with PrinterSimulator(port=0, out_dir=tmp) as printer:
        send(printer.port, job)
        [label] = printer.wait_printed(1)

Modules: `stream` (bytes → commands), `graphics` (^GF data), `formats` (^XA … ^XZ → raster),
`status` (~HS, ~HQES, ~HI, SGD), `printer` (buffer, conditions, odometer), `output` (PNG + JSON),
`server` (TCP), `control` (HTTP), `cli`.
"""

from etikett_runner.printer_sim.graphics import GraphicError
from etikett_runner.printer_sim.printer import Conditions, PrintedLabel, SimError
from etikett_runner.printer_sim.server import PrinterSimulator
from etikett_runner.printer_sim.status import StatusSnapshot

__all__ = [
    "Conditions",
    "GraphicError",
    "PrintedLabel",
    "PrinterSimulator",
    "SimError",
    "StatusSnapshot",
]
