"""The printers table: adopted print targets, with a claim item per name (names are unique)."""

from __future__ import annotations

from pynamodb.attributes import (
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UTCDateTimeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from etikett.store.base import table_meta

_META = table_meta("printers_table")


class PrintersByName(GlobalSecondaryIndex["PrinterRecord"]):
    class Meta:
        index_name = "by_name"
        projection = AllProjection()

    kind = UnicodeAttribute(hash_key=True)
    name_key = UnicodeAttribute(range_key=True)


class PrinterRecord(Model):
    Meta = _META
    pk = UnicodeAttribute(hash_key=True)  # prn_…
    kind = UnicodeAttribute(default="printer")
    name = UnicodeAttribute()
    name_key = UnicodeAttribute()  # casefolded name
    runner_id = UnicodeAttribute()
    uri = UnicodeAttribute()  # tcp://host:port
    language = UnicodeAttribute()  # zpl | tspl | epl
    dpi = NumberAttribute()
    model = UnicodeAttribute(null=True)
    firmware = UnicodeAttribute(null=True)
    status = UnicodeAttribute(null=True)  # last reported: ready, paper_out, …
    status_at = UTCDateTimeAttribute(null=True)
    finding_id = UnicodeAttribute(null=True)
    created_at = UTCDateTimeAttribute()
    by_name = PrintersByName()


class PrinterNameClaim(Model):
    Meta = _META
    pk = UnicodeAttribute(hash_key=True)  # "name#<casefolded name>"
    printer_id = UnicodeAttribute()
    # A printer keeps its Runner for life; kept here too, so that printing by name can read
    # the printer and its Runner together (absent on claims written before it was added).
    runner_id = UnicodeAttribute(null=True)

    @staticmethod
    def key_for(name: str) -> str:
        return f"name#{name.casefold()}"


class FindingRecord(Model):
    """A printer a discovery job found, kept a week for adoption with createPrinter."""

    Meta = _META
    pk = UnicodeAttribute(hash_key=True)  # "finding#fnd_…"
    id = UnicodeAttribute()
    runner_id = UnicodeAttribute()
    job_id = UnicodeAttribute()
    address = UnicodeAttribute()  # host:port
    model = UnicodeAttribute(null=True)
    firmware = UnicodeAttribute(null=True)
    dpi = NumberAttribute(null=True)
    status = UnicodeAttribute(null=True)
    language = UnicodeAttribute(default="zpl")
    found_at = UTCDateTimeAttribute()
    expires = TTLAttribute(null=True)

    @staticmethod
    def key_for(finding_id: str) -> str:
        return f"finding#{finding_id}"
