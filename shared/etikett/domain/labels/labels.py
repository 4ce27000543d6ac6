"""Labels: creation (blank, from a Vorlage on its own or other stock, a media preset or dimensions),
reading and listing,
renaming, archiving, copying and deleting. Documents and versions live in `label_versions`."""

from typing import Any, Literal, NamedTuple, Self

from pydantic import ConfigDict, Field, model_validator

from etikett import clock
from etikett.catalog.presets import get_preset
from etikett.domain.actors import Invocation
from etikett.domain.audit import audit
from etikett.domain.labels import label_validation, label_versions
from etikett.domain.labels.label_records import load_label
from etikett.ids import new_id
from etikett.store import labels
from etikett.store.labels import LabelRecord, VersionRecord
from etikett.store.pages import Page
from etikett.store.unit_of_work import MAX_WRITES, UnitOfWork
from etikett_engine.dsl.label import DPI, MAX_MM, MIN_LABEL_MM, LabelDocument
from etikett_engine.dsl.preflight import LabelFinding
from etikett_engine.errors import NotFound, ProblemCode
from etikett_engine.model import Model

DEFAULT_WIDTH_MM = 101.6  # 4 × 6 in, the most printed label size there is
DEFAULT_HEIGHT_MM = 152.4
NAME = Field(min_length=1, max_length=200)
WRITES_PER_LABEL = 3  # the label, its version 1 and its audit entry
MAX_CREATED_TOGETHER = MAX_WRITES // WRITES_PER_LABEL


class LabelSize(Model):
    width_mm: float
    height_mm: float
    dpi: int


class Label(Model):
    id: str
    name: str
    status: Literal["draft", "released"] = Field(
        description="`released` once a version is approved and printable by `lbl_…`."
    )
    released_version: int | None
    latest_version: int
    archived: bool
    size: LabelSize
    vorlage_id: str | None = None
    copied_from: str | None = None
    created_at: str
    updated_at: str


class SizeIn(Model):
    model_config = ConfigDict(extra="forbid")
    width_mm: float = Field(ge=MIN_LABEL_MM, le=MAX_MM)
    height_mm: float = Field(ge=MIN_LABEL_MM, le=MAX_MM)


class NewLabel(Model):
    model_config = ConfigDict(extra="forbid")
    name: str = NAME
    size: SizeIn | None = Field(default=None, description="Default 101.6 × 152.4 mm (4 × 6 in).")
    dpi: DPI = 203


class NewLabelFromVorlage(Model):
    model_config = ConfigDict(extra="forbid")
    vorlageId: str = Field(description="An id from listLabelVorlagen.")
    name: str = NAME
    preset_id: str | None = Field(
        default=None,
        description="Lay the Vorlage out on this media preset (its size and density) instead "
        "of its own stock; an id from listMediaPresets.",
    )
    size: SizeIn | None = Field(
        default=None, description="Or on stock of this size (not with `preset_id`)."
    )
    dpi: DPI | None = Field(
        default=None,
        description="The density (not with `preset_id`); default the Vorlage's. Sizes in dots "
        "are converted to keep their length in mm.",
    )
    fit: Literal["keep", "scale"] = Field(
        default="keep",
        description="`keep`: objects stay where they are in mm, and the answer's findings say "
        "what no longer fits; `scale`: the layout is scaled to fit the stock and centred.",
    )

    @model_validator(mode="after")
    def _one_stock(self) -> Self:
        if self.preset_id is not None and (self.size is not None or self.dpi is not None):
            raise ValueError("give `preset_id`, or `size` and/or `dpi`, not both")
        return self


class CreatedFromVorlage(Label):
    findings: list[LabelFinding] = Field(
        default_factory=list,
        description="Preflight findings of version 1 on its stock: what does not fit, clipped "
        "barcodes, narrow modules.",
    )


class NewLabelFromPreset(Model):
    model_config = ConfigDict(extra="forbid")
    preset_id: str = Field(description="An id from listMediaPresets.")
    name: str = NAME


class NewLabelFromDimensions(Model):
    model_config = ConfigDict(extra="forbid")
    name: str = NAME
    width_mm: float = Field(ge=MIN_LABEL_MM, le=MAX_MM)
    height_mm: float = Field(ge=MIN_LABEL_MM, le=MAX_MM)
    dpi: DPI = 203


class Rename(Model):
    model_config = ConfigDict(extra="forbid")
    name: str = NAME


class ArchiveChange(Model):
    model_config = ConfigDict(extra="forbid")
    archived: bool = Field(default=True, description="false brings an archived label back.")


class CopyRequest(Model):
    model_config = ConfigDict(extra="forbid")
    name: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Default: the source's name with ' (copy)'.",
    )
    version: int | None = Field(
        default=None, ge=1, description="Version to copy; default the latest."
    )


class CopyInfo(Model):
    label_id: str
    name: str
    suggested_name: str
    latest_version: int
    released_version: int | None
    versions: list[label_versions.VersionEntry] = Field(
        description="The newest versions (up to 20), to choose which one to copy."
    )
    has_authored_form: bool


def view(record: LabelRecord) -> Label:
    return Label(
        id=record.id,
        name=record.name,
        status="released" if record.released_version else "draft",
        released_version=record.released_version or None,
        latest_version=record.latest_version,
        archived=record.archived,
        size=LabelSize(width_mm=record.width_mm, height_mm=record.height_mm, dpi=record.dpi),
        vorlage_id=record.vorlage_id,
        copied_from=record.copied_from,
        created_at=clock.rfc3339(record.created_at),
        updated_at=clock.rfc3339(record.updated_at),
    )


def get(label_id: str) -> Label:
    return view(load_label(label_id))


def create(
    invocation: Invocation,
    name: str,
    document: dict[str, Any],
    *,
    vorlage_id: str | None = None,
    copied_from: str | None = None,
    comment: str | None = None,
) -> Label:
    """A new label whose version 1 is `document` (validated), written with its audit entry."""
    (created,) = create_together(
        invocation,
        [
            NewDocument(
                name, document, comment=comment, vorlage_id=vorlage_id, copied_from=copied_from
            )
        ],
    )
    return created


class NewDocument(NamedTuple):
    """A label to create: its name, its version 1 and where it came from."""

    name: str
    document: dict[str, Any]
    comment: str | None = None
    vorlage_id: str | None = None
    copied_from: str | None = None


def create_together(invocation: Invocation, new: list[NewDocument]) -> list[Label]:
    """New labels (documents validated), each with version 1 and its audit entry, written in one
    transaction: all of them or none (at most `MAX_CREATED_TOGETHER`)."""
    if len(new) > MAX_CREATED_TOGETHER:
        raise ValueError(f"{len(new)} labels; one transaction creates {MAX_CREATED_TOGETHER}")
    records: list[LabelRecord] = []
    with UnitOfWork() as uow:
        for item in new:
            record, version = _new_label(invocation, item)
            details = {
                "name": item.name,
                "version": 1,
                "vorlage_id": item.vorlage_id,
                "copied_from": item.copied_from,
            }
            uow.add_audit(audit.record(invocation, record.id, details=details))
            labels.add(uow, record, version)
            records.append(record)
    return [view(record) for record in records]


def _new_label(invocation: Invocation, new: NewDocument) -> tuple[LabelRecord, VersionRecord]:
    parsed = label_validation.validate_label(new.document)
    now = clock.now()
    label_id = new_id("lbl")
    record = LabelRecord(
        id=label_id,
        name=new.name,
        archived=False,
        width_mm=parsed.size.width_mm,
        height_mm=parsed.size.height_mm,
        dpi=parsed.dpi,
        latest_version=1,
        released_version=None,
        form_latest_version=0,
        form_released_version=None,
        vorlage_id=new.vorlage_id,
        copied_from=new.copied_from,
        created_at=now,
        updated_at=now,
    )
    document = parsed.model_dump(mode="json", exclude_none=True)
    version = label_versions.new_version_record(
        invocation, label_id, "label", 1, document, new.comment
    )
    return record, version


def create_blank(invocation: Invocation, request: NewLabel) -> Label:
    size = request.size or SizeIn(width_mm=DEFAULT_WIDTH_MM, height_mm=DEFAULT_HEIGHT_MM)
    document: dict[str, Any] = {
        "size": size.model_dump(),
        "dpi": request.dpi,
        "variables": [],
        "objects": [],
    }
    return create(invocation, request.name, document)


def create_from_dimensions(invocation: Invocation, request: NewLabelFromDimensions) -> Label:
    document: dict[str, Any] = {
        "size": {"width_mm": request.width_mm, "height_mm": request.height_mm},
        "dpi": request.dpi,
        "variables": [],
        "objects": [],
    }
    return create(invocation, request.name, document)


def create_from_preset(invocation: Invocation, request: NewLabelFromPreset) -> Label:

    preset = get_preset(request.preset_id)
    if preset is None:
        raise NotFound(
            f"No media preset {request.preset_id!r}.",
            ProblemCode.PRESET_NOT_FOUND,
            preset_id=request.preset_id,
        )
    document: dict[str, Any] = {
        "size": {"width_mm": preset.width_mm, "height_mm": preset.height_mm},
        "dpi": preset.dpi,
        "variables": [],
        "objects": [],
    }
    return create(invocation, request.name, document, comment=f"from preset {preset.id}")


def create_from_vorlage(invocation: Invocation, request: NewLabelFromVorlage) -> CreatedFromVorlage:
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett.catalog.vorlagen import get_vorlage, on_stock

    vorlage = get_vorlage(request.vorlageId)
    if vorlage is None:
        raise NotFound(
            f"No Vorlage {request.vorlageId!r}; listLabelVorlagen lists them.",
            ProblemCode.VORLAGE_NOT_FOUND,
            vorlageId=request.vorlageId,
        )
    document = vorlage.document
    own = document["size"]
    width, height, dpi = own["width_mm"], own["height_mm"], document.get("dpi", 203)
    stock = None
    if request.preset_id is not None:
        preset = get_preset(request.preset_id)
        if preset is None:
            raise NotFound(
                f"No media preset {request.preset_id!r}.",
                ProblemCode.PRESET_NOT_FOUND,
                preset_id=request.preset_id,
            )
        width, height, dpi, stock = preset.width_mm, preset.height_mm, preset.dpi, preset.id
    if request.size is not None:
        width, height = request.size.width_mm, request.size.height_mm
        stock = f"{width:g} × {height:g} mm"
    if request.dpi is not None:
        dpi = request.dpi
    if stock is not None or dpi != document.get("dpi", 203):
        document = on_stock(document, width, height, dpi, request.fit)
    comment = f"from Vorlage {vorlage.id}" + (f" on {stock}" if stock else "")
    if request.fit == "scale" and stock:
        comment += ", scaled to fit"
    created = create(invocation, request.name, document, vorlage_id=vorlage.id, comment=comment)
    # Loaded here, not at the labels and mcp functions' cold start.
    from etikett.domain.labels import preflight

    parsed = LabelDocument.model_validate(document)
    return CreatedFromVorlage(
        **created.model_dump(), findings=preflight.findings(created.id, 1, parsed)
    )


def list_labels(limit: int, cursor: str | None, archived: bool | None) -> Page[Label]:
    found = labels.page(limit, cursor, archived)
    return Page(items=[view(record) for record in found.items], next_cursor=found.next_cursor)


def _changed(
    invocation: Invocation, before: LabelRecord, after: LabelRecord, details: dict[str, Any]
) -> Label:
    after = after._replace(updated_at=clock.now())
    with UnitOfWork(audit.record(invocation, before.id, details=details)) as uow:
        labels.update(uow, before, after)
    return get(before.id)


def rename(invocation: Invocation, label_id: str, request: Rename) -> Label:
    record = load_label(label_id)
    after = record._replace(name=request.name)
    return _changed(invocation, record, after, {"before": record.name, "after": request.name})


def archive(invocation: Invocation, label_id: str, request: ArchiveChange) -> Label:
    record = load_label(label_id)
    after = record._replace(archived=request.archived)
    return _changed(invocation, record, after, {"archived": request.archived})


def delete(invocation: Invocation, label_id: str) -> None:
    """The label disappears at once (with its audit entry); its versions are swept after."""
    record = load_label(label_id)
    details = {
        "name": record.name,
        "latest_version": record.latest_version,
        "released_version": record.released_version,
    }
    with UnitOfWork(audit.record(invocation, label_id, details=details)) as uow:
        labels.delete(uow, record)
    labels.delete_versions(label_id)


def copy(invocation: Invocation, label_id: str, request: CopyRequest) -> Label:
    source = load_label(label_id)
    answer = label_versions.get_document(label_id, request.version)
    name = request.name or f"{source.name} (copy)"
    return create(
        invocation,
        name,
        answer.document,
        vorlage_id=source.vorlage_id,
        copied_from=f"{label_id}@{answer.version}",
        comment=f"copy of {label_id}@{answer.version}",
    )


def copy_info(label_id: str) -> CopyInfo:
    record = load_label(label_id)
    versions = label_versions.list_versions(label_id, "label", 20, None).items
    return CopyInfo(
        label_id=label_id,
        name=record.name,
        suggested_name=f"{record.name} (copy)",
        latest_version=record.latest_version,
        released_version=record.released_version or None,
        versions=versions,
        has_authored_form=record.form_latest_version > 0,
    )
