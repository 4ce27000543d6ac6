"""Routes of the Labels group: catalogs, labels, documents, versions, release, forms, previews."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import File, Query, Response, UploadFile
from pydantic import BaseModel, Field

from etikett.api.access import any_caller, requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit, static_page
from etikett.api.routing import Responses, router
from etikett.catalog.presets import MediaPreset, presets
from etikett.domain import imports, label_versions, labels, previews
from etikett.domain.actors import Invocation
from etikett.domain.label_versions import DocumentAnswer, DocumentPatch, StatusChange

routes = router(prefix="/api/v1", tags=["Labels"])

Anyone = Annotated[Invocation, any_caller()]
Designer = Annotated[Invocation, requires("designer")]
Approver = Annotated[Invocation, requires("approver")]

_NOT_FOUND: Responses = {
    404: {"description": "Unknown label or version (`label.not_found`, `label.version_not_found`)"}
}
_PATCH_ERRORS: Responses = {
    **_NOT_FOUND,
    409: {"description": "Stale `base_version` (`document.version_conflict`)"},
    413: {"description": "Document too large (`document.too_large`)"},
}


class VorlageVariable(BaseModel):
    name: str
    type: str
    description: str | None = None
    sample: Any = None
    required: bool = False
    computed: bool


class VorlageSummary(BaseModel):
    id: str
    name: str
    description: str
    category: str
    preset_id: str | None
    width_mm: float
    height_mm: float
    dpi: int
    variables: list[VorlageVariable] = Field(
        description="Entered variables need values to print; computed ones follow from them."
    )


class PreviewRequest(BaseModel):
    model_config = {"extra": "forbid"}
    variables: dict[str, Any] = Field(
        default_factory=dict,
        description="Values for the label's declared variables; missing ones use their default, "
        "then their sample.",
    )


def _vorlage_summary(vorlage: Any) -> VorlageSummary:
    document = vorlage.document
    return VorlageSummary(
        id=vorlage.id,
        name=vorlage.name,
        description=vorlage.description,
        category=vorlage.category,
        preset_id=vorlage.preset_id,
        width_mm=document["size"]["width_mm"],
        height_mm=document["size"]["height_mm"],
        dpi=document.get("dpi", 203),
        variables=[
            VorlageVariable(
                name=v["name"],
                type=v.get("type", "string"),
                description=v.get("description"),
                sample=v.get("sample"),
                required=v.get("required", False),
                computed=v.get("expression") is not None,
            )
            for v in document.get("variables", [])
        ],
    )


@routes.get(
    "/label-vorlagen",
    operation_id="listLabelVorlagen",
    response_model=ItemList[VorlageSummary],
    summary="List label templates (Vorlagen) to start a label from",
    description="Real templates people print (GS1 logistics, shipping, product, asset, "
    "pharma/UDI, pallet, shelf, warehouse location) with their variables and "
    "sample values. Pass an `id` to createLabelFromVorlage.",
)
def list_vorlagen(
    invocation: Anyone, limit: Limit = DEFAULT, cursor: Cursor = None
) -> ItemList[VorlageSummary]:
    from etikett.catalog.vorlagen import vorlagen

    page = static_page([_vorlage_summary(v) for v in vorlagen()], limit, cursor)
    return ItemList[VorlageSummary].of(page)


@routes.get(
    "/media-presets",
    operation_id="listMediaPresets",
    response_model=ItemList[MediaPreset],
    summary="List media presets (label stock by brand and part number)",
    description="Zebra, Brother, Dymo and Avery rolls with exact sizes and densities. "
    "Pass an `id` to createLabelFromPreset.",
)
def list_presets(
    invocation: Anyone, limit: Limit = DEFAULT, cursor: Cursor = None
) -> ItemList[MediaPreset]:
    return ItemList[MediaPreset].of(static_page(presets(), limit, cursor))


@routes.post(
    "/import",
    operation_id="postImport",
    response_model=imports.ImportAnswer,
    status_code=201,
    summary="Import labels from a ZPL or gLabels file",
    description="Upload a ZPL II file (one label per ^XA…^XZ format) or a gLabels 3/4 "
    "document (.glabels, plain or gzip) as the multipart field `file`. Each label becomes a "
    "new label whose version 1 is a draft; `report` names, by line or element, everything "
    "that could not be carried over exactly. ZPL positions are dots at `dpi`. A refused "
    "file creates nothing.",
    responses={
        413: {"description": "The file is too large, or expands too far (`import.too_large`)"},
        422: {
            "description": "`import.unreadable`, `import.unsafe_xml`, `import.too_complex`, "
            "`import.graphic_invalid`, `import.size_invalid`, `import.empty`"
        },
    },
)
def post_import(
    invocation: Designer,
    file: Annotated[UploadFile, File(description="The ZPL or .glabels file.")],
    dpi: Annotated[
        int,
        Query(
            description="Density the file's dots are meant for (ZPL), and of the labels: "
            "203, 300 or 600.",
            json_schema_extra={"enum": [203, 300, 600]},
        ),
    ] = imports.DEFAULT_DPI,
) -> imports.ImportAnswer:
    from etikett.errors import InvalidRequest
    from etikett.settings import get_settings

    if dpi not in (203, 300, 600):
        raise InvalidRequest.field("query.dpi", "must be 203, 300 or 600")
    data = file.file.read(get_settings().import_max_bytes + 1)
    return imports.import_file(invocation, file.filename or "import", data, dpi)


@routes.get(
    "/labels",
    operation_id="listLabels",
    response_model=ItemList[labels.Label],
    summary="List labels by name",
)
def list_labels(
    invocation: Anyone,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
    archived: Annotated[bool | None, Query(description="Filter on archived; omit for all.")] = None,
) -> ItemList[labels.Label]:
    return ItemList[labels.Label].of(labels.list_labels(limit, cursor, archived))


@routes.post(
    "/labels",
    operation_id="createLabel",
    response_model=labels.Label,
    status_code=201,
    summary="Create a blank label (default 4 × 6 in at 203 dpi)",
)
def create_label(body: labels.NewLabel, invocation: Designer) -> labels.Label:
    return labels.create_blank(invocation, body)


@routes.post(
    "/labels/from-vorlage",
    operation_id="createLabelFromVorlage",
    response_model=labels.Label,
    status_code=201,
    summary="Create a label from a template (Vorlage)",
    description="Copies the Vorlage's document into version 1 of a new label. Keep the "
    "returned id; read the document with getLabelDocument.",
    responses={404: {"description": "Unknown Vorlage (`vorlage.not_found`)"}},
)
def create_from_vorlage(body: labels.NewLabelFromVorlage, invocation: Designer) -> labels.Label:
    return labels.create_from_vorlage(invocation, body)


@routes.post(
    "/labels/from-preset",
    operation_id="createLabelFromPreset",
    response_model=labels.Label,
    status_code=201,
    summary="Create a blank label sized for a media preset",
    responses={404: {"description": "Unknown preset (`preset.not_found`)"}},
)
def create_from_preset(body: labels.NewLabelFromPreset, invocation: Designer) -> labels.Label:
    return labels.create_from_preset(invocation, body)


@routes.post(
    "/labels/from-dimensions",
    operation_id="createLabelFromDimensions",
    response_model=labels.Label,
    status_code=201,
    summary="Create a blank label of any size",
)
def create_from_dimensions(
    body: labels.NewLabelFromDimensions, invocation: Designer
) -> labels.Label:
    return labels.create_from_dimensions(invocation, body)


@routes.get(
    "/labels/{labelId}",
    operation_id="getLabel",
    response_model=labels.Label,
    summary="Read a label's metadata",
    responses=_NOT_FOUND,
)
def get_label(labelId: str, invocation: Anyone) -> labels.Label:
    return labels.get(labelId)


@routes.patch(
    "/labels/{labelId}",
    operation_id="patchLabel",
    response_model=labels.Label,
    summary="Rename a label",
    responses=_NOT_FOUND,
)
def rename_label(labelId: str, body: labels.Rename, invocation: Designer) -> labels.Label:
    return labels.rename(invocation, labelId, body)


@routes.delete(
    "/labels/{labelId}",
    operation_id="deleteLabel",
    status_code=204,
    summary="Delete a label with all its versions",
    responses=_NOT_FOUND,
)
def delete_label(labelId: str, invocation: Designer) -> Response:
    labels.delete(invocation, labelId)
    return Response(status_code=204)


@routes.post(
    "/labels/{labelId}/status",
    operation_id="postLabelStatus",
    response_model=label_versions.VersionEntry,
    summary="Switch a version's release status (approve, back to draft, retire)",
    description="Approving makes the version the released one (`lbl_…` prints it) and "
    "retires the previous one. While aiFreigabePflicht is on, a version "
    "authored by an agent can only be approved by a person.",
    responses={
        **_NOT_FOUND,
        403: {"description": "Forbidden (`auth.forbidden`, `policy.human_required`)"},
        422: {
            "description": "Invalid request (`request.invalid`, params.fields names each "
            "field); the version has error findings (`label.has_errors`, params.findings)"
        },
    },
)
def set_status(
    labelId: str,
    body: StatusChange,
    invocation: Approver,
) -> label_versions.VersionEntry:
    return label_versions.set_status(invocation, labelId, body)


@routes.post(
    "/labels/{labelId}/archive",
    operation_id="postLabelArchive",
    response_model=labels.Label,
    summary="Archive a label (or bring it back)",
    responses=_NOT_FOUND,
)
def archive_label(
    labelId: str,
    invocation: Designer,
    body: labels.ArchiveChange | None = None,
) -> labels.Label:
    return labels.archive(invocation, labelId, body or labels.ArchiveChange())


@routes.post(
    "/labels/{labelId}/duplicate",
    operation_id="postLabelDuplicate",
    response_model=labels.Label,
    status_code=201,
    summary="Duplicate a label (its latest version) as a new label",
    responses=_NOT_FOUND,
)
def duplicate_label(
    labelId: str,
    invocation: Designer,
    body: labels.CopyRequest | None = None,
) -> labels.Label:
    request = labels.CopyRequest(name=body.name if body else None)
    return labels.copy(invocation, labelId, request)


@routes.post(
    "/labels/{labelId}/save-copy",
    operation_id="postLabelSaveCopy",
    response_model=labels.Label,
    status_code=201,
    summary="Save a chosen version of a label as a new label",
    responses=_NOT_FOUND,
)
def save_copy(labelId: str, body: labels.CopyRequest, invocation: Designer) -> labels.Label:
    return labels.copy(invocation, labelId, body)


@routes.get(
    "/labels/{labelId}/copy-info",
    operation_id="getLabelCopyInfo",
    response_model=labels.CopyInfo,
    summary="What the copy dialog needs",
    responses=_NOT_FOUND,
)
def copy_info(labelId: str, invocation: Anyone) -> labels.CopyInfo:
    return labels.copy_info(labelId)


@routes.get(
    "/labels/{labelId}/document",
    operation_id="getLabelDocument",
    response_model=DocumentAnswer,
    summary="Read the label document (latest or ?version=N)",
    description="The schema is svc://schema/label. Object ids must be kept by patches. "
    "`findings` are the version's preflight findings (objects outside the label, clipped "
    "barcodes, quiet zones, narrow modules, overflowing text, CEL, variables); an error "
    "finding blocks approval and printing (`label.has_errors`).",
    responses=_NOT_FOUND,
)
def get_document(
    labelId: str,
    invocation: Anyone,
    version: Annotated[int | None, Query(ge=1)] = None,
) -> DocumentAnswer:
    return label_versions.get_document(labelId, version, with_findings=True)


@routes.patch(
    "/labels/{labelId}/document",
    operation_id="patchLabelDocument",
    response_model=DocumentAnswer,
    summary="Patch the label document (RFC 6902); saves a new draft version",
    description="Operations apply to the latest version; `base_version` guards against "
    "overwriting a newer one. Ids of objects are kept: delete an object with "
    "`remove /objects/<index>`, never change an `id`.",
    responses={
        **_PATCH_ERRORS,
        422: {
            "description": "`document.invalid` (params.errors "
            "name JSON paths), "
            "`document.id_changed`, "
            "`document.patch_failed`"
        },
    },
)
def patch_document(
    labelId: str,
    body: DocumentPatch,
    invocation: Designer,
) -> DocumentAnswer:
    return label_versions.patch_document(invocation, labelId, body)


@routes.post(
    "/labels/{labelId}/preview",
    operation_id="postLabelPreview",
    summary="Render the label as its 1-bit print raster (PNG)",
    description="Exactly the dots the printer will print, at the label's density. "
    "Headers: X-Label-Dots (WxH), X-Label-Dpi, X-Label-Findings (how many preflight "
    "findings this layout has; getLabelDocument lists them). Missing variables use their "
    "default, then their sample.",
    response_class=Response,
    responses={
        200: {
            "description": "The print raster",
            "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}},
        },
        **_NOT_FOUND,
    },
)
def preview(
    labelId: str,
    invocation: Anyone,
    stufe: Annotated[Literal["etikett"], Query(description="`etikett`: the label.")] = "etikett",
    version: Annotated[int | None, Query(ge=1)] = None,
    body: PreviewRequest | None = None,
) -> Response:
    result = previews.preview(labelId, version, (body or PreviewRequest()).variables)
    return Response(
        result.png,
        media_type="image/png",
        headers={
            "X-Label-Dots": f"{result.width_dots}x{result.height_dots}",
            "X-Label-Dpi": str(result.dpi),
            "X-Label-Version": str(result.version),
            "X-Label-Findings": str(result.findings),
        },
    )


@routes.get(
    "/labels/{labelId}/form",
    operation_id="getLabelForm",
    response_model=DocumentAnswer,
    summary="The print form: authored, or derived from the entered variables (version 0)",
    responses=_NOT_FOUND,
)
def get_form(
    labelId: str,
    invocation: Anyone,
    version: Annotated[int | None, Query(ge=1)] = None,
) -> DocumentAnswer:
    return label_versions.get_form(labelId, version)


@routes.patch(
    "/labels/{labelId}/form",
    operation_id="patchLabelForm",
    response_model=DocumentAnswer,
    summary="Patch the print form (RFC 6902); saves a new draft form version",
    description="The first patch applies to the derived form (base_version 0). Field ids are kept.",
    responses=_PATCH_ERRORS,
)
def patch_form(labelId: str, body: DocumentPatch, invocation: Designer) -> DocumentAnswer:
    return label_versions.patch_form(invocation, labelId, body)


@routes.get(
    "/labels/{labelId}/versions",
    operation_id="listLabelVersions",
    response_model=ItemList[label_versions.VersionEntry],
    summary="Version history, newest first",
    responses=_NOT_FOUND,
)
def list_versions(
    labelId: str,
    invocation: Anyone,
    limit: Limit = DEFAULT,
    cursor: Cursor = None,
) -> ItemList[label_versions.VersionEntry]:
    page = label_versions.list_versions(labelId, "label", limit, cursor)
    return ItemList[label_versions.VersionEntry].of(page)


@routes.get(
    "/labels/{labelId}/versions/{version}",
    operation_id="getLabelVersion",
    response_model=label_versions.VersionWithDocument,
    summary="One version with its document",
    responses=_NOT_FOUND,
)
def get_version(
    labelId: str,
    version: int,
    invocation: Anyone,
) -> label_versions.VersionWithDocument:
    return label_versions.get_version(labelId, version)
