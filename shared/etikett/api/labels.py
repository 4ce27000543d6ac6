"""Routes of the Labels group: catalogs (label_catalogs.py), labels themselves (here: list,
create, rename, status, archive, copy, delete), and their documents, previews, forms and versions
(label_documents.py). One router, in that order."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query, Response

from etikett.api import label_catalogs, label_documents
from etikett.api.access import any_caller, requires
from etikett.api.label_documents import NOT_FOUND
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import router
from etikett.domain.actors import Invocation
from etikett.domain.labels import label_versions, labels
from etikett.domain.labels.label_versions import StatusChange

routes = router(prefix="/api/v1", tags=["Labels"])

Anyone = Annotated[Invocation, any_caller()]
Designer = Annotated[Invocation, requires("designer")]
Approver = Annotated[Invocation, requires("approver")]

# The group's router holds every route of the group itself, in this order (catalogs, labels,
# documents): the OpenAPI document, the MCP catalog and the fallback's 404/405 read its routes.
# (FastAPI's include_router would nest the others as an included router instead.)
routes.routes.extend(label_catalogs.routes.routes)


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
    response_model=labels.CreatedFromVorlage,
    status_code=201,
    summary="Create a label from a template (Vorlage), on its own stock or another",
    description="Copies the Vorlage's document into version 1 of a new label. With "
    "`preset_id` (or `size` and `dpi`) it is laid out on that stock: `fit: keep` leaves every "
    "object where it is, `scale` scales the layout to fit and centres it; sizes in dots keep "
    "their length at the new density. The answer's `findings` say what does not fit. Keep "
    "the returned id; read the document with getLabelDocument.",
    openapi_extra={
        "requestBody": {
            "content": {
                "application/json": {
                    "examples": {
                        "own": {
                            "summary": "On the Vorlage's own stock",
                            "value": {"vorlageId": "shipping-label", "name": "Versand DE"},
                        },
                        "preset": {
                            "summary": "On a media preset, scaled to fit",
                            "value": {
                                "vorlageId": "shipping-label",
                                "name": "Versand 4 × 4",
                                "preset_id": "zebra-4x4-203",
                                "fit": "scale",
                            },
                        },
                    }
                }
            }
        }
    },
    responses={
        404: {"description": "Unknown Vorlage or preset (`vorlage.not_found`, `preset.not_found`)"}
    },
)
def create_from_vorlage(
    body: labels.NewLabelFromVorlage, invocation: Designer
) -> labels.CreatedFromVorlage:
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
    responses=NOT_FOUND,
)
def get_label(labelId: str, invocation: Anyone) -> labels.Label:
    return labels.get(labelId)


@routes.patch(
    "/labels/{labelId}",
    operation_id="patchLabel",
    response_model=labels.Label,
    summary="Rename a label",
    responses=NOT_FOUND,
)
def rename_label(labelId: str, body: labels.Rename, invocation: Designer) -> labels.Label:
    return labels.rename(invocation, labelId, body)


@routes.delete(
    "/labels/{labelId}",
    operation_id="deleteLabel",
    status_code=204,
    summary="Delete a label with all its versions",
    responses=NOT_FOUND,
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
        **NOT_FOUND,
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
    responses=NOT_FOUND,
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
    responses=NOT_FOUND,
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
    responses=NOT_FOUND,
)
def save_copy(labelId: str, body: labels.CopyRequest, invocation: Designer) -> labels.Label:
    return labels.copy(invocation, labelId, body)


@routes.get(
    "/labels/{labelId}/copy-info",
    operation_id="getLabelCopyInfo",
    response_model=labels.CopyInfo,
    summary="What the copy dialog needs",
    responses=NOT_FOUND,
)
def copy_info(labelId: str, invocation: Anyone) -> labels.CopyInfo:
    return labels.copy_info(labelId)


routes.routes.extend(label_documents.routes.routes)
