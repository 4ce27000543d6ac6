"""What a Runner uploads of its offline prints (etikett_runner.offline_prints), strictly
validated and bounded, and what the service answers for each print."""

import json
from datetime import datetime
from typing import Any, Literal, Self

from pydantic import AwareDatetime, ConfigDict, Field, StrictInt, model_validator

from etikett.domain.printing.print_limits import MAX_RECORDS
from etikett_engine.model import Model

MAX_PRINTS = 100  # prints in one upload: an answer within the API's 30 s, also for a slow table
MAX_RECORD_BYTES = 32_768  # one record's variables and serials, as JSON
MAX_COUNTERS = 32  # counters one label reads

Result = Literal["accepted", "already", "refused"]
Flag = Literal["deployment_not_approved", "offline_not_allowed"]


class OfflineRecordIn(Model):
    """One record of an offline print (etikett_runner.offline_prints.OfflineRecord)."""

    model_config = ConfigDict(extra="forbid")
    variables: dict[str, Any] = Field(description="The record's resolved variables.")
    serials: dict[str, Any] = Field(
        default_factory=dict,
        max_length=MAX_COUNTERS,
        description="Counter name → the value as the label shows it.",
    )
    counter_values: dict[str, StrictInt] = Field(
        default_factory=dict,
        max_length=MAX_COUNTERS,
        description="Counter name → the value taken from one of this Runner's counter blocks.",
    )

    @model_validator(mode="after")
    def _bounded(self) -> Self:
        size = len(json.dumps([self.variables, self.serials], default=str))
        if size > MAX_RECORD_BYTES:
            raise ValueError(
                f"a record's variables and serials take {size} bytes as JSON, "
                f"at most {MAX_RECORD_BYTES}"
            )
        return self


class OfflinePrintIn(Model):
    """One job a Runner printed on site (etikett_runner.offline_prints.OfflinePrint)."""

    model_config = ConfigDict(extra="forbid")
    id: str = Field(
        # A ULID's first character is at most 7 (128 bits): a larger one is no id.
        pattern="^opr_[0-7][0-9A-HJKMNP-TV-Z]{25}$",
        description="Chosen by the Runner (a ULID of its print time): taken once.",
    )
    run_id: str = Field(min_length=1, max_length=100)
    deployment_id: str = Field(min_length=1, max_length=100)
    flow_id: str = Field(min_length=1, max_length=100)
    flow_version: StrictInt = Field(ge=1)
    label_id: str = Field(min_length=1, max_length=100)
    label_version: StrictInt = Field(ge=1)
    printer: str = Field(min_length=1, max_length=100, description="The flow's printer alias.")
    printer_id: str = Field(min_length=1, max_length=100)
    copies: StrictInt = Field(ge=1, le=10_000)
    records: list[OfflineRecordIn] = Field(min_length=1, max_length=MAX_RECORDS)
    printed_at: AwareDatetime = Field(description="When the Runner sent it to the printer.")
    outcome: Literal["sent", "failed"] | None = Field(
        description="What the printer said; null: the Runner crashed between journaling the "
        "print and the printer's answer (it may or may not be on paper)."
    )
    outcome_reason: str | None = Field(default=None, max_length=500)
    outcome_at: AwareDatetime | None = None


class OfflinePrintsUpload(Model):
    model_config = ConfigDict(extra="forbid")
    prints: list[OfflinePrintIn] = Field(
        min_length=1,
        max_length=MAX_PRINTS,
        description=f"Oldest first; at most {MAX_PRINTS} prints and {MAX_RECORDS} records.",
    )

    @model_validator(mode="after")
    def _bounded(self) -> Self:
        records = sum(len(p.records) for p in self.prints)
        if records > MAX_RECORDS:
            raise ValueError(f"{records} records in one upload; at most {MAX_RECORDS}")
        ids = [p.id for p in self.prints]
        if len(set(ids)) != len(ids):
            raise ValueError("a print id appears twice")
        return self


class PrintSynced(Model):
    id: str = Field(description="The print's id.")
    result: Result = Field(
        description="`accepted`: archived now; `already`: archived by an earlier upload; "
        "`refused`: not archived, for `reason` (sending it again does not change that)."
    )
    job_id: str | None = Field(default=None, description="The job it became (not if refused).")
    flag: Flag | None = Field(
        default=None,
        description="Archived, but `deployment_not_approved`: its deployment no longer runs in "
        "the Runner's group (rolled back, superseded, stage not approved); or "
        "`offline_not_allowed`: its offline policy does not allow printing offline.",
    )
    reason: str | None = Field(default=None, description="Why it was refused (a code).")
    detail: str | None = Field(default=None, description="The refusal, in words.")


class OfflinePrintsAnswer(Model):
    prints: list[PrintSynced] = Field(description="One per print sent, in the same order.")


def printed_time(value: datetime) -> datetime:
    """A Runner's time to the millisecond, as the archive records it."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)
