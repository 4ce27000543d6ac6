"""The one exception hierarchy of Etikett, over its catalog of problem codes (`problem_codes`).

Every expected failure is an `EtikettError` carrying a `ProblemCode`: the code names the condition
and fixes its HTTP status. The API maps these to RFC 9457 problem details in one place
(`etikett.api.problems`), the MCP endpoint to `isError` results, and the OpenAPI document publishes
the whole catalog (`x-etikett-problem-codes`). Domain code raises them and never builds responses.
"""

from __future__ import annotations

from typing import Any, Self

from etikett_engine.problem_codes import ProblemCode as ProblemCode


class EtikettError(Exception):
    """Base of every expected failure; never a 500."""

    code: ProblemCode = ProblemCode.REQUEST_INVALID
    title: str = "Bad request"

    def __init__(self, detail: str, code: ProblemCode | None = None, **params: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code
        self.params = params
        self.headers: dict[str, str] = {}
        self.audit_target: str | None = None  # the refusal's audit entry names it

    def audited_as(self, target_id: str) -> Self:
        """The same error, whose refusal is audited with `target_id` as its target (where the
        request's path names none)."""
        self.audit_target = target_id
        return self

    @property
    def status(self) -> int:
        return self.code.status


class MalformedRequest(EtikettError):
    code, title = ProblemCode.REQUEST_MALFORMED, "Malformed request"


class InvalidRequest(EtikettError):
    code, title = ProblemCode.REQUEST_INVALID, "Invalid request"

    @classmethod
    def field(cls, field: str, message: str) -> InvalidRequest:
        """The same shape as a schema validation failure: params.fields names the field."""
        return cls(
            f"Invalid fields: {field}.",
            fields=[{"field": field, "message": message, "type": "value_error"}],
        )


class InvalidCursor(EtikettError):
    code, title = ProblemCode.REQUEST_INVALID_CURSOR, "Invalid cursor"


class Unauthenticated(EtikettError):
    code, title = ProblemCode.AUTH_UNAUTHENTICATED, "Authentication required"

    def __init__(self, detail: str, code: ProblemCode | None = None, **params: Any) -> None:
        super().__init__(detail, code, **params)
        self.headers["WWW-Authenticate"] = 'Bearer realm="etikett"'


class Forbidden(EtikettError):
    code, title = ProblemCode.AUTH_FORBIDDEN, "Forbidden"


class HumanRequired(EtikettError):
    """The approval policy (`aiFreigabePflicht`) wants a person, not an agent."""

    code, title = ProblemCode.POLICY_HUMAN_REQUIRED, "A person must do this"


class NotFound(EtikettError):
    code, title = ProblemCode.RESOURCE_NOT_FOUND, "Not found"


class Conflict(EtikettError):
    code, title = ProblemCode.RESOURCE_CONFLICT, "Conflict"


class VersionConflict(Conflict):
    code, title = ProblemCode.DOCUMENT_VERSION_CONFLICT, "Stale base version"


class LabelNotReleased(EtikettError):
    code, title = ProblemCode.PRINT_LABEL_NOT_RELEASED, "Label version not released"


class LabelHasErrors(EtikettError):
    code, title = ProblemCode.LABEL_HAS_ERRORS, "The label version has error findings"


class DocumentInvalid(EtikettError):
    code, title = ProblemCode.DOCUMENT_INVALID, "Invalid document"

    @classmethod
    def at(cls, path: str, message: str) -> DocumentInvalid:
        """One problem at one JSON path of the document."""
        return cls(
            f"The document is invalid at {path}: {message}",
            errors=[{"path": path, "message": message, "type": "value_error"}],
        )


class IdChanged(EtikettError):
    code, title = ProblemCode.DOCUMENT_ID_CHANGED, "Object ids must be kept"


class PatchFailed(EtikettError):
    code, title = ProblemCode.DOCUMENT_PATCH_FAILED, "The patch does not apply"


class CertificateRefused(EtikettError):
    code, title = ProblemCode.RUNNER_CERTIFICATE_INVALID, "Client certificate refused"


class PayloadTooLarge(EtikettError):
    code, title = ProblemCode.REQUEST_TOO_LARGE, "Payload too large"


class UnsupportedMediaType(EtikettError):
    code, title = ProblemCode.REQUEST_UNSUPPORTED_MEDIA_TYPE, "Unsupported media type"


class Throttled(EtikettError):
    code, title = ProblemCode.REQUEST_THROTTLED, "Too many requests"

    def __init__(
        self, detail: str, retry_after: int, code: ProblemCode | None = None, **params: Any
    ) -> None:
        super().__init__(detail, code, retry_after=retry_after, **params)
        self.headers["Retry-After"] = str(retry_after)


class ProviderFailed(EtikettError):
    """A language model failed: unreachable, refused the key, or answered something unusable.
    `detail` never contains the credential's secret."""

    code, title = ProblemCode.AI_BAD_RESPONSE, "The language model failed"


class RateLimited(ProviderFailed):
    code, title = ProblemCode.AI_RATE_LIMITED, "The language model is rate limited"

    def __init__(self, detail: str, retry_after: int | None, **params: Any) -> None:
        super().__init__(detail, None, retry_after=retry_after, **params)
        if retry_after is not None:
            self.headers["Retry-After"] = str(retry_after)
