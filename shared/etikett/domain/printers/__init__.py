"""Printers: adopted or declared on a Runner, their addresses and ports; `printer_records` is
what other aggregates read."""
