"""The work of a print job: its label document, records, serials, copies and language, and
turning it into the printer's bytes — every distinct record rendered once, in order. Small
requests do this at once; large ones in the print-render function."""

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

from pydantic import field_serializer

from etikett.domain import activity
from etikett_engine.dsl.label import LabelDocument
from etikett_engine.model import Model

PROGRESS_EVERY = 1000  # records between two progress lines of a large data stream


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

    def encode(self, job_id: str | None = None) -> bytes:
        """Every record's label, in order; `job_id`: progress lines for a long stream."""
        label = self.labels()
        total = len(self.records)
        chunks: list[bytes] = []
        for index in range(total):
            if job_id is not None and index and index % PROGRESS_EVERY == 0:
                activity.progress(f"job {job_id}: rendering", index, total)
            chunks.append(label(index))
        if job_id is not None and total > PROGRESS_EVERY:
            activity.progress(f"job {job_id}: rendering", total, total)
        return b"".join(chunks)

    def labels(self) -> Callable[[int], bytes]:
        """One record's label by its index; a record equal to one encoded before (values and
        serials) is not rendered again."""
        # Loaded here, not at the mcp, print_renderer and printing functions' cold start.
        from etikett_engine.render import encode_job, render, resolve_variables

        document = self.document
        encoded: dict[str, bytes] = {}

        def label(index: int) -> bytes:
            record, serials = self.records[index], self.serials[index]
            key = json.dumps([record, serials], sort_keys=True, default=str)
            found = encoded.get(key)
            if found is None:
                values = resolve_variables(
                    document, record, use_samples=False, now=self.now, counters=serials
                )
                image = render(document, values, now=self.now, counters=serials)
                found = encoded[key] = encode_job(
                    image, self.language, copies=self.copies, dpi=document.dpi
                )
            return found

        return label
