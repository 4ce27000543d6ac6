"""The work of a print job: its label document, records, serials, copies and language, and
turning it into the printer's bytes — every distinct record rendered once, in order. Small
requests do this at once; large ones in the print-render function."""

import json
from datetime import datetime
from typing import Any

from pydantic import field_serializer

from etikett.dsl.label import LabelDocument
from etikett.model import Model


class PrintWork(Model):
    document: LabelDocument
    records: list[dict[str, Any]]
    serials: list[dict[str, Any]]  # per record: counter name -> value taken
    copies: int
    language: str  # zpl | tspl | epl
    now: datetime  # what `now` is in the label's expressions (to the millisecond)

    @field_serializer("document")
    def _document(self, document: LabelDocument) -> dict[str, Any]:
        return document.model_dump(mode="json", exclude_none=True)

    def encode(self) -> bytes:
        from etikett.render import encode_epl, encode_tspl, encode_zpl, render, resolve_variables

        document = self.document
        encoded: dict[str, bytes] = {}
        chunks: list[bytes] = []
        for record, serials in zip(self.records, self.serials, strict=True):
            key = json.dumps([record, serials], sort_keys=True, default=str)
            if key not in encoded:
                values = resolve_variables(
                    document, record, use_samples=False, now=self.now, counters=serials
                )
                image = render(document, values, now=self.now, counters=serials)
                if self.language == "tspl":
                    encoded[key] = encode_tspl(image, copies=self.copies, dpi=document.dpi)
                elif self.language == "epl":
                    encoded[key] = encode_epl(image, copies=self.copies, dpi=document.dpi)
                else:
                    encoded[key] = encode_zpl(image, copies=self.copies)
            chunks.append(encoded[key])
        return b"".join(chunks)
