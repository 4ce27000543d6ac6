"""The render layer's problems: bad print data, barcode or image data are the caller's to fix."""

from __future__ import annotations

from typing import Any

from etikett_engine.errors import EtikettError, ProblemCode


class VariablesInvalid(EtikettError):
    code, title = ProblemCode.LABEL_VARIABLES_INVALID, "Invalid label variables"

    def __init__(self, errors: list[dict[str, str]]) -> None:
        names = ", ".join(error["variable"] for error in errors)
        super().__init__(f"Invalid label variables: {names}.", errors=errors)


class BarcodeInvalid(EtikettError):
    code, title = ProblemCode.LABEL_BARCODE_INVALID, "Invalid barcode data"

    def __init__(self, object_id: str, symbology: str, message: str) -> None:
        super().__init__(
            f"Barcode {object_id!r} ({symbology}) cannot encode its data: {message}",
            object_id=object_id,
            symbology=symbology,
            message=message,
        )


class ImageInvalid(EtikettError):
    code, title = ProblemCode.LABEL_IMAGE_INVALID, "Invalid image data"

    def __init__(self, object_id: str, message: str) -> None:
        super().__init__(
            f"Image {object_id!r} cannot be used: {message}", object_id=object_id, message=message
        )


class LabelTooLarge(EtikettError):
    code, title = ProblemCode.LABEL_TOO_LARGE, "Label too large to render"

    def __init__(self, width: int, height: int, object_id: str | None = None) -> None:
        what = f"Object {object_id!r}" if object_id is not None else "The label"
        super().__init__(
            f"{what} would be {width} x {height} dots; at most {MAX_DOTS} dots can be rendered.",
            object_id=object_id,
            width_dots=width,
            height_dots=height,
            max_dots=MAX_DOTS,
        )


class LayoutTooComplex(EtikettError):
    code, title = ProblemCode.LABEL_TOO_COMPLEX, "Label too complex to lay out"

    def __init__(self, what: str, limit: int, object_id: str) -> None:
        super().__init__(
            f"Laying this label out would take more than {limit:,} {what} (at {object_id!r}); "
            "a label this heavy cannot be laid out in one go.",
            what=what,
            limit=limit,
            object_id=object_id,
        )


# One raster or object tile: 64 M dots is 64 MB in Pillow's mode "1" (a byte per dot), more than
# an 8.5 x 14 in label at 600 dpi (43 M dots); beyond it a preview would exhaust a function.
MAX_DOTS = 64_000_000


def ensure_renderable(width: int, height: int, object_id: str | None = None) -> None:
    if width * height > MAX_DOTS:
        raise LabelTooLarge(width, height, object_id)


def with_object(error: EtikettError, object_id: str) -> EtikettError:
    """Name the label object an expression error came from (the caller sees where to look)."""
    params: Any = error.params
    if isinstance(params, dict):
        params.setdefault("object_id", object_id)
    return error
