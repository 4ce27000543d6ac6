"""Routes of the Labels group for a label's documents: reading and patching the label and form
documents, previews (of saved versions, and layouts of documents being designed), and the
versions they are saved as."""

from typing import Annotated, Any, Literal

from fastapi import Depends, Path, Query, Request, Response
from pydantic import ConfigDict, Field, WithJsonSchema

from etikett.api.access import any_caller, requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit
from etikett.api.routing import Responses, router
from etikett.domain.actors import Invocation
from etikett.domain.labels import label_versions, previews
from etikett.domain.labels.label_versions import DocumentAnswer, DocumentPatch
from etikett_engine.dsl.strict import MAX_VERSION
from etikett_engine.model import Model

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


class LayoutRequest(Model):
    model_config = ConfigDict(extra="forbid")
    document: Annotated[
        dict[str, Any], WithJsonSchema({"allOf": [{"$ref": "#/components/schemas/LabelDocument"}]})
    ] = Field(description="A label document (svc://schema/label), saved or not.")
    variables: dict[str, Any] | None = Field(
        default=None,
        description="Values for the declared variables, as print data gives them; missing "
        "ones (and all, when omitted) take their default, then their sample.",
    )


LAYOUT_EXAMPLE = {
    "document": {
        "size": {"width_mm": 50, "height_mm": 30},
        "dpi": 203,
        "variables": [{"name": "sku", "type": "string", "sample": "A-1042"}],
        "objects": [
            {"id": "title", "type": "text", "x_mm": 3, "y_mm": 3, "content": "Lager"},
            {
                "id": "code",
                "type": "barcode",
                "symbology": "code128",
                "x_mm": 5,
                "y_mm": 12,
                "height_mm": 10,
                "expression": "sku",
            },
        ],
    }
}


async def body_length(request: Request) -> int:
    """The request body's length (Starlette keeps the body it read)."""
    return len(await request.body())


@routes.post(
    "/labels/layout",
    operation_id="postLabelLayout",
    response_model=previews.Layout,
    summary="Lay out a label document, saved or not: raster, object boxes and findings",
    description="The designer's round trip: the document as it is being edited (nothing is "
    "saved) becomes the 1-bit print raster (`png_base64`, exactly the dots the printer gets), "
    "every object's box in dots after rotation from that very layout, the preflight findings "
    "of that layout and the values it used. Nothing here blocks: an object that cannot be "
    "drawn is left out with a finding, variables that do not resolve are left empty. Missing "
    "variables take their default, then their sample; counters show their next value. "
    "Bounded like a saved version: the label schema (`document.invalid` with JSON paths), at "
    "most what a version may store (`document.too_large`), CEL by its limits, the raster by "
    "the renderer's (`label.too_large`); and the work across objects (`label.too_complex`).",
    openapi_extra={
        "requestBody": {"content": {"application/json": {"example": LAYOUT_EXAMPLE}}},
    },
    responses={
        200: {
            "description": "The layout",
            "content": {
                "application/json": {
                    "example": {
                        "width_dots": 400,
                        "height_dots": 240,
                        "dpi": 203,
                        "png_base64": "iVBORw0KGgo…",
                        "objects": [
                            {
                                "id": "title",
                                "index": 0,
                                "type": "text",
                                "box": [24, 24, 103, 57],
                                "ink": [24, 27, 102, 50],
                                "drawn": True,
                                "text": "Lager",
                            }
                        ],
                        "findings": [],
                        "values": {"sku": "A-1042"},
                    }
                }
            },
        },
        413: {"description": "Larger than a version may store (`document.too_large`)"},
        422: {
            "description": "`document.invalid` (params.errors name JSON paths), "
            "`label.variables_invalid` (given variables that do not fit), `label.too_large`, "
            "`label.too_complex` (more than 20,000 characters of text and barcode data, or "
            "four rasters' worth of ink, across its objects)"
        },
    },
)
def layout(
    body: LayoutRequest,
    invocation: Anyone,
    length: Annotated[int, Depends(body_length)],
) -> previews.Layout:
    return previews.layout(body.document, body.variables, size_hint=length)


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
