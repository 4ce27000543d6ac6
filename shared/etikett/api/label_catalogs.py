"""Routes of the Labels group that start a label: the Vorlagen and media presets catalogs, and
the import of ZPL and gLabels files."""

from typing import Annotated, Any

from fastapi import File, Query, UploadFile
from pydantic import Field

from etikett.api.access import any_caller, requires
from etikett.api.pagination import DEFAULT, Cursor, ItemList, Limit, static_page
from etikett.api.routing import router
from etikett.catalog.presets import MediaPreset, presets
from etikett.domain.actors import Invocation
from etikett.domain.labels import imports
from etikett.settings import get_settings
from etikett_engine.errors import InvalidRequest
from etikett_engine.model import Model

# Part of the Labels group: labels.py puts these routes in the group's router.
routes = router(prefix="/api/v1", tags=["Labels"])

Anyone = Annotated[Invocation, any_caller()]
Designer = Annotated[Invocation, requires("designer")]


class VorlageVariable(Model):
    name: str
    type: str
    description: str | None = None
    sample: Any = None
    required: bool = False
    computed: bool


class VorlageSummary(Model):
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
    # Loaded here, not at the labels and mcp functions' cold start.
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

    if dpi not in (203, 300, 600):
        raise InvalidRequest.field("query.dpi", "must be 203, 300 or 600")
    data = file.file.read(get_settings().import_max_bytes + 1)
    return imports.import_file(invocation, file.filename or "import", data, dpi)
