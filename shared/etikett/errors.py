"""The one exception hierarchy of Etikett: each error carries its HTTP status and problem code.

The API maps these to RFC 9457 problem details in one place (`etikett.api.problems`); the MCP
endpoint maps them to `isError` results. Domain code raises them and never builds responses itself.
"""

from __future__ import annotations

from typing import Any, ClassVar


class EtikettError(Exception):
    """Base of every expected failure; never a 500."""

    status: ClassVar[int] = 400
    code: ClassVar[str] = "request.invalid"
    title: ClassVar[str] = "Bad request"

    def __init__(self, detail: str, code: str | None = None, **params: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        if code is not None:
            self.code = code  # type: ignore[misc]  # instance override of the class default
        self.params = params
        self.headers: dict[str, str] = {}


class MalformedRequest(EtikettError):
    status, code, title = 400, "request.malformed", "Malformed request"


class InvalidRequest(EtikettError):
    status, code, title = 422, "request.invalid", "Invalid request"

    @classmethod
    def field(cls, field: str, message: str) -> InvalidRequest:
        """The same shape as a schema validation failure: params.fields names the field."""
        return cls(
            f"Invalid fields: {field}.",
            fields=[{"field": field, "message": message, "type": "value_error"}],
        )


class Unauthenticated(EtikettError):
    status, code, title = 401, "auth.unauthenticated", "Authentication required"

    def __init__(self, detail: str, code: str | None = None, **params: Any) -> None:
        super().__init__(detail, code, **params)
        self.headers["WWW-Authenticate"] = 'Bearer realm="etikett"'


class Forbidden(EtikettError):
    status, code, title = 403, "auth.forbidden", "Forbidden"


class NotFound(EtikettError):
    status, code, title = 404, "resource.not_found", "Not found"


class Conflict(EtikettError):
    status, code, title = 409, "resource.conflict", "Conflict"


class PayloadTooLarge(EtikettError):
    status, code, title = 413, "request.too_large", "Payload too large"


class Throttled(EtikettError):
    status, code, title = 429, "request.throttled", "Too many requests"

    def __init__(
        self, detail: str, retry_after: int, code: str | None = None, **params: Any
    ) -> None:
        super().__init__(detail, code, retry_after=retry_after, **params)
        self.headers["Retry-After"] = str(retry_after)


# The catalog of problem codes, published in the OpenAPI document. Each code names one condition;
# clients branch on it, so a code once published never changes its meaning.
PROBLEM_CODES: dict[str, tuple[int, str]] = {
    "request.malformed": (400, "The body is not well-formed JSON (or not the declared content)."),
    "request.invalid": (
        422,
        "The request does not fit the operation's schema; params.fields names each field.",
    ),
    "request.invalid_cursor": (400, "The pagination cursor is not one this service issued."),
    "request.too_large": (413, "The request body exceeds the size limit."),
    "request.throttled": (429, "Too many requests; retry after the Retry-After header's seconds."),
    "route.not_found": (404, "No operation has this path."),
    "route.method_not_allowed": (
        405,
        "The path exists but not with this method; see the Allow header.",
    ),
    "auth.unauthenticated": (401, "No bearer token or session cookie was presented."),
    "auth.invalid_token": (401, "The token is unknown, revoked or belongs to a deactivated user."),
    "auth.token_expired": (401, "The token has passed its expires_at."),
    "auth.invalid_credentials": (401, "Username or password is wrong."),
    "auth.login_throttled": (429, "Too many failed logins for this username; retry later."),
    "auth.user_inactive": (403, "The user is deactivated."),
    "auth.forbidden": (
        403,
        "The caller's roles do not permit this operation; params.required lists them.",
    ),
    "auth.human_required": (
        403,
        "Only a person signed in with a session may do this, not a token.",
    ),
    "auth.not_a_session": (
        409,
        "Logout ends a session; a service-account token is revoked instead.",
    ),
    "auth.setup_done": (409, "First-time setup has already been done."),
    "auth.wrong_password": (403, "The current password is wrong."),
    "auth.weak_password": (422, "The new password does not meet the password rules."),
    "token.not_found": (404, "No service-account token has this id."),
    "user.not_found": (404, "No user has this id."),
    "user.username_taken": (409, "Another user already has this username."),
    "user.role_not_held": (404, "The user does not hold this role."),
    "user.last_admin": (409, "The change would leave no active admin."),
    "audit.not_found": (404, "No audit-log entry has this id."),
    "resource.conflict": (409, "A concurrent change got there first; nothing was written."),
    "document.invalid": (
        422,
        "The document breaks its schema; params.errors gives each JSON path.",
    ),
    "document.id_changed": (422, "A patch would change or drop an object's, field's or node's id."),
    "document.patch_failed": (422, "An RFC 6902 operation does not apply (path, test, syntax)."),
    "document.version_conflict": (409, "base_version is not the latest version; read it again."),
    "document.too_large": (413, "The document exceeds the size limit."),
    "label.not_found": (404, "No label has this id."),
    "label.version_not_found": (404, "The label has no such version."),
    "label.variables_invalid": (
        422,
        "Variables missing, unknown or of the wrong type; params.errors.",
    ),
    "label.barcode_invalid": (422, "A barcode's data does not fit its symbology (check digit, …)."),
    "label.image_invalid": (422, "An image object's data is not a readable PNG or JPEG."),
    "label.too_large": (422, "The label is too large to render at its density."),
    "flow.not_found": (404, "No flow has this id."),
    "flow.version_not_found": (404, "The flow has no such version."),
    "flow.in_use": (409, "A deployment uses the flow; roll it back before deleting the flow."),
    "flow.no_trigger": (422, "The flow has no trigger node, so no record can enter it."),
    "deployment.not_found": (404, "No deployment has this id."),
    "deployment.flow_has_errors": (422, "The flow version has lint errors; params.findings."),
    "deployment.stage_not_awaiting": (409, "That stage is not the one awaiting approval."),
    "deployment.ended": (409, "The deployment was rolled back or superseded already."),
    "deployment.printer_not_found": (404, "The deployment assigns no printer to this alias."),
    "deployment.printer_unassigned": (
        409,
        "The flow prints to an alias this deployment assigns no printer to.",
    ),
    "vorlage.not_found": (404, "No Vorlage has this id; listLabelVorlagen lists them."),
    "preset.not_found": (404, "No media preset has this id; listMediaPresets lists them."),
    "policy.not_found": (404, "No policy has this name."),
    "policy.human_required": (
        403,
        "The approval policy requires a person (a session), not an agent.",
    ),
    "cel.invalid": (422, "The CEL expression does not compile or evaluate; params line, column."),
    "runner_group.not_found": (404, "No Runner group has this id."),
    "runner_group.no_online_runner": (409, "No Runner of the group is online to search."),
    "runner.not_found": (404, "No Runner has this id."),
    "runner.not_active": (409, "The Runner's enrollment is not approved yet."),
    "runner.certificate_required": (
        401,
        "The agent channel needs the Runner's client certificate.",
    ),
    "runner.certificate_invalid": (401, "The client certificate was not issued by this service."),
    "runner.certificate_expired": (401, "The client certificate has expired."),
    "runner.certificate_revoked": (401, "The certificate is no longer the Runner's."),
    "runner.removed": (401, "The Runner of this certificate was removed."),
    "enrollment.token_invalid": (401, "The enrollment token is unknown or missing."),
    "enrollment.token_used": (401, "The enrollment token was used already."),
    "enrollment.token_expired": (401, "The enrollment token has expired."),
    "enrollment.secret_invalid": (401, "The enrollment secret does not match."),
    "enrollment.not_found": (404, "No enrollment has this id."),
    "enrollment.runner_removed": (409, "The enrollment's Runner was removed."),
    "context.not_found": (404, "No context parameter has this name."),
    "printer.not_found": (404, "No printer has this id or name."),
    "printer.name_taken": (409, "Another printer has this name."),
    "finding.not_found": (404, "No discovery finding has this id (they are kept a week)."),
    "job.not_found": (404, "No job has this id."),
    "job.not_cancellable": (409, "The job's bytes reached a printer already."),
    "job.finished": (409, "The job has a final outcome already."),
    "job.other_runner": (403, "The job belongs to another Runner."),
    "webhook.not_found": (404, "No webhook receiver has this id."),
    "webhook.url_refused": (
        422,
        "The webhook URL is neither HTTPS nor plain HTTP to loopback (or is malformed).",
    ),
    "print.label_not_released": (
        409,
        "The label has no released version, or version N is not approved.",
    ),
    "print.variables_invalid": (
        422,
        "Print data does not fit the label; params.errors names record and variable.",
    ),
    "print.too_many_records": (413, "More than 10,000 records in one print request."),
    "print.density_mismatch": (409, "The printer's density differs from the label's."),
    "print.idempotency_conflict": (409, "The idempotency key was used with another request body."),
    "print.in_progress": (409, "A request with this idempotency key is still running."),
    "archive.not_found": (404, "No print-archive entry has this id."),
    "counter.not_found": (404, "No counter has this name."),
    "counter.exists": (409, "A counter with this name exists."),
    "counter.inactive": (409, "The counter is deactivated; prints that need it are refused."),
    "resource.not_found": (404, "The resource does not exist."),
    "internal.error": (500, "An unexpected error; the request id identifies it in the logs."),
}
