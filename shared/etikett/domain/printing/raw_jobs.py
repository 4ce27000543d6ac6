"""Raw jobs: bytes in a printer's language sent as they are to one of a Runner's printers,
refused unless they are printer data (`etikett_engine.printer_data`)."""

import base64
from typing import Literal

from pydantic import ConfigDict, Field

from etikett.domain.actors import Invocation
from etikett.domain.printers import printer_records
from etikett.domain.printing import jobs
from etikett_engine import printer_data
from etikett_engine.errors import InvalidRequest, ProblemCode
from etikett_engine.model import Model

MAX_RAW_BYTES = 4 * 1024 * 1024


class RawJobRequest(Model):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["raw"] = "raw"
    printer_id: str = Field(description="An adopted printer of this Runner.")
    data_base64: str = Field(
        min_length=4,
        max_length=MAX_RAW_BYTES * 4 // 3 + 4,
        description="The bytes to send to the printer, base64.",
    )
    expected_labels: int | None = Field(
        default=None,
        ge=0,
        le=100000,
        description="Labels these bytes print; lets the Runner confirm by the printer's counter.",
    )


def submit_raw(invocation: Invocation, runner_id: str, request: RawJobRequest) -> jobs.Job:
    """Raw bytes for one of the Runner's printers."""
    printer = printer_records.load(request.printer_id)
    if printer.runner_id != runner_id:
        raise InvalidRequest.field("body.printer_id", f"the printer belongs to {printer.runner_id}")
    try:
        data = base64.b64decode(request.data_base64, validate=True)
    except ValueError:
        raise InvalidRequest.field("body.data_base64", "not valid base64") from None
    refused = printer_data.refusal(data, printer.language)
    if refused is not None:
        raise InvalidRequest(
            f"The data is not {printer.language.upper()} for a printer: {refused}.",
            ProblemCode.JOB_NOT_PRINTER_DATA,
            reason=refused,
            language=printer.language,
        )
    payload = {
        "printer": printer_records.target(printer),
        "expected_labels": request.expected_labels,
    }
    return jobs.submit(
        invocation,
        runner_id,
        "raw",
        payload,
        printer_id=printer.id,
        data=data,
        audit_details={"bytes": len(data)},
    )
