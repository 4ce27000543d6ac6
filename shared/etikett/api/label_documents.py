"""Routes of the Labels group for a label's documents: reading and patching the label and form
documents, previews, and the versions they are saved as."""

from typing import Annotated, Any, Literal

from fastapi import Path, Query, Response
from pydantic import ConfigDict, Field

from etikett.api.access import any_caller, requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import Responses, router
from etikett.domain import label_versions, previews
from etikett.domain.actors import Invocation
from etikett.domain.label_versions import DocumentAnswer, DocumentPatch
from etikett.dsl.strict import MAX_VERSION
from etikett.model import Model

# Part of the Labels group: labels.py puts these routes in the group's router.
routes = router(prefix="/api/v1", tags=["Labels"])

Anyone = Annotated[Invocation, any_caller()]
Designer = Annotated[Invocation, requires("designer")]

NOT_FOUND: Responses = {
    404: {"description": "Unknown label or version (`label.not_found`, `label.version_not_found`)"}
}
PATCH_ERRORS: Responses = {
    **NOT_FOUND,
    409: {"description": "Stale `base_version` (`document.version_conflict`)"},
    413: {"description": "Document too large (`document.too_large`)"},
}


CounterValue = Annotated[str, Field(max_length=100)] | int


class PreviewRequest(Model):
    model_config = ConfigDict(extra="forbid")
    variables: dict[str, Any] = Field(
        default_factory=dict,
        description="Values for the label's declared variables; missing ones use their default, "
        "then (with `samples`) their sample.",
    )
    samples: bool = Field(
        default=True,
        description="false: a missing variable takes only its default and is otherwise empty, "
        "as a print leaves it (how a flow's dry run shows what it would print).",
    )
    counters: dict[str, CounterValue] | None = Field(
        default=None,
        max_length=50,
        description="Values of `counters.<name>` to show instead of the next ones (a dry run's "
        "`counter_values`); nothing is taken either way.",
        examples=[{"sscc_serial": "0000042"}],
    )


@routes.get(
    "/labels/{labelId}/document",
    operation_id="getLabelDocument",
    response_model=DocumentAnswer,
    summary="Read the label document (latest or ?version=N)",
    description="The schema is svc://schema/label. Object ids must be kept by patches. "
    "`findings` are the version's preflight findings (objects outside the label, clipped "
    "barcodes, quiet zones, narrow modules, overflowing text, CEL, variables); an error "
    "finding blocks approval and printing (`label.has_errors`).",
    responses=NOT_FOUND,
)
def get_document(
    labelId: str,
    invocation: Anyone,
    version: Annotated[int | None, Query(ge=1, le=MAX_VERSION)] = None,
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
        **PATCH_ERRORS,
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
    "sample, then their default (a print uses only the default).",
    response_class=Response,
    responses={
        200: {
            "description": "The print raster",
            "content": {"image/png": {"schema": {"type": "string", "format": "binary"}}},
        },
        **NOT_FOUND,
    },
)
def preview(
    labelId: str,
    invocation: Anyone,
    stufe: Annotated[Literal["etikett"], Query(description="`etikett`: the label.")] = "etikett",
    version: Annotated[int | None, Query(ge=1, le=MAX_VERSION)] = None,
    body: PreviewRequest | None = None,
) -> Response:
    request = body or PreviewRequest()
    result = previews.preview(
        labelId, version, request.variables, samples=request.samples, counters=request.counters
    )
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
    responses=NOT_FOUND,
)
def get_form(
    labelId: str,
    invocation: Anyone,
    version: Annotated[int | None, Query(ge=1, le=MAX_VERSION)] = None,
) -> DocumentAnswer:
    return label_versions.get_form(labelId, version)


@routes.patch(
    "/labels/{labelId}/form",
    operation_id="patchLabelForm",
    response_model=DocumentAnswer,
    summary="Patch the print form (RFC 6902); saves a new draft form version",
    description="The first patch applies to the derived form (base_version 0). Field ids are kept.",
    responses=PATCH_ERRORS,
)
def patch_form(labelId: str, body: DocumentPatch, invocation: Designer) -> DocumentAnswer:
    return label_versions.patch_form(invocation, labelId, body)


@routes.get(
    "/labels/{labelId}/versions",
    operation_id="listLabelVersions",
    response_model=ItemList[label_versions.VersionEntry],
    summary="Version history, newest first",
    responses=NOT_FOUND,
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
    responses=NOT_FOUND,
)
def get_version(
    labelId: str,
    version: Annotated[int, Path(ge=1, le=MAX_VERSION)],
    invocation: Anyone,
) -> label_versions.VersionWithDocument:
    return label_versions.get_version(labelId, version)
