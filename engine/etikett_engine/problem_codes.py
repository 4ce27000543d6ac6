"""The catalog of problem codes: each a stable code, the HTTP status it fixes and what it
means, as data. The OpenAPI document publishes it (`x-etikett-problem-codes`) and the
documentation's problem-code reference is generated from that; `errors` raises them."""

from __future__ import annotations

from enum import StrEnum


class ProblemCode(StrEnum):
    """A stable, machine-readable problem code with its HTTP status and meaning. Clients branch on
    the code, so a code once published never changes its meaning."""

    status: int
    meaning: str

    def __new__(cls, code: str, status: int, meaning: str) -> ProblemCode:
        member = str.__new__(cls, code)
        member._value_ = code
        member.status = status
        member.meaning = meaning
        return member

    REQUEST_MALFORMED = (
        "request.malformed",
        400,
        "The body is not well-formed JSON (or not the declared content).",
    )
    REQUEST_INVALID = (
        "request.invalid",
        422,
        "The request does not fit the operation's schema; params.fields names each field.",
    )
    REQUEST_INVALID_CURSOR = (
        "request.invalid_cursor",
        400,
        "The pagination cursor is not one this service issued.",
    )
    REQUEST_TOO_LARGE = ("request.too_large", 413, "The request body exceeds the size limit.")
    REQUEST_UNSUPPORTED_MEDIA_TYPE = (
        "request.unsupported_media_type",
        415,
        "The body is not `application/json` (or the operation's declared upload type); "
        "params.accepted lists what it takes.",
    )
    REQUEST_THROTTLED = (
        "request.throttled",
        429,
        "Too many requests; retry after the Retry-After header's seconds.",
    )
    ROUTE_NOT_FOUND = ("route.not_found", 404, "No operation has this path.")
    ROUTE_METHOD_NOT_ALLOWED = (
        "route.method_not_allowed",
        405,
        "The path exists but not with this method; see the Allow header.",
    )
    AUTH_UNAUTHENTICATED = (
        "auth.unauthenticated",
        401,
        "No bearer token or session cookie was presented.",
    )
    AUTH_INVALID_TOKEN = (
        "auth.invalid_token",
        401,
        "The token is unknown, revoked or belongs to a deactivated user.",
    )
    AUTH_TOKEN_EXPIRED = ("auth.token_expired", 401, "The token has passed its expires_at.")
    AUTH_INVALID_CREDENTIALS = ("auth.invalid_credentials", 401, "Username or password is wrong.")
    AUTH_LOGIN_THROTTLED = (
        "auth.login_throttled",
        429,
        "Too many failed logins for this username from this address; retry after the "
        "Retry-After header's seconds.",
    )
    AUTH_USER_INACTIVE = ("auth.user_inactive", 403, "The user is deactivated.")
    AUTH_FORBIDDEN = (
        "auth.forbidden",
        403,
        "The caller's roles do not permit this operation; params.required lists them.",
    )
    AUTH_HUMAN_REQUIRED = (
        "auth.human_required",
        403,
        "Only a person signed in with a session may do this, not a token.",
    )
    AUTH_CSRF_REQUIRED = (
        "auth.csrf_required",
        403,
        "A change authenticated by the session cookie needs the console's header "
        "`X-Etikett-CSRF: 1`; other clients use `Authorization: Bearer`.",
    )
    AUTH_ORIGIN_REFUSED = (
        "auth.origin_refused",
        403,
        "The request came from a page of another origin (`Origin`, `Sec-Fetch-Site`).",
    )
    AUTH_NOT_A_SESSION = (
        "auth.not_a_session",
        409,
        "Logout ends a session; a service-account token is revoked instead.",
    )
    AUTH_SETUP_DONE = ("auth.setup_done", 409, "First-time setup has already been done.")
    AUTH_SETUP_SECRET_REQUIRED = (
        "auth.setup_secret_required",
        403,
        "First-time setup on a deployed stack needs the stack's setup secret (`setup_secret`: "
        "the template parameter SetupSecret).",
    )
    AUTH_WRONG_PASSWORD = ("auth.wrong_password", 403, "The current password is wrong.")
    AUTH_WEAK_PASSWORD = (
        "auth.weak_password",
        422,
        "The new password does not meet the password rules.",
    )
    TOKEN_NOT_FOUND = ("token.not_found", 404, "No service-account token has this id.")
    USER_NOT_FOUND = ("user.not_found", 404, "No user has this id.")
    USER_USERNAME_TAKEN = ("user.username_taken", 409, "Another user already has this username.")
    USER_ROLE_NOT_HELD = ("user.role_not_held", 404, "The user does not hold this role.")
    USER_LAST_ADMIN = ("user.last_admin", 409, "The change would leave no active admin.")
    AUDIT_NOT_FOUND = ("audit.not_found", 404, "No audit-log entry has this id.")
    RESOURCE_CONFLICT = (
        "resource.conflict",
        409,
        "A concurrent change got there first; nothing was written.",
    )
    DOCUMENT_INVALID = (
        "document.invalid",
        422,
        "The document breaks its schema; params.errors gives each JSON path.",
    )
    DOCUMENT_ID_CHANGED = (
        "document.id_changed",
        422,
        "A patch would change or drop an object's, field's or node's id.",
    )
    DOCUMENT_PATCH_FAILED = (
        "document.patch_failed",
        422,
        "An RFC 6902 operation does not apply (path, test, syntax).",
    )
    DOCUMENT_VERSION_CONFLICT = (
        "document.version_conflict",
        409,
        "base_version is not the latest version; read it again.",
    )
    DOCUMENT_TOO_LARGE = ("document.too_large", 413, "The document exceeds the size limit.")
    LABEL_NOT_FOUND = ("label.not_found", 404, "No label has this id.")
    LABEL_VERSION_NOT_FOUND = ("label.version_not_found", 404, "The label has no such version.")
    LABEL_VARIABLES_INVALID = (
        "label.variables_invalid",
        422,
        "Variables missing, unknown or of the wrong type; params.errors.",
    )
    LABEL_BARCODE_INVALID = (
        "label.barcode_invalid",
        422,
        "A barcode's data does not fit its symbology (check digit, …).",
    )
    LABEL_IMAGE_INVALID = (
        "label.image_invalid",
        422,
        "An image object's data is not a readable PNG or JPEG.",
    )
    LABEL_TOO_LARGE = ("label.too_large", 422, "The label is too large to render at its density.")
    LABEL_TOO_COMPLEX = (
        "label.too_complex",
        422,
        "Laying the label out would shape or encode more characters, or draw more dots, than "
        "one layout may (params.limit).",
    )
    LABEL_HAS_ERRORS = (
        "label.has_errors",
        422,
        "The label version has error findings (preflight: clipped objects or barcodes, quiet "
        "zones, narrow modules, overflowing text, …); fix them before approving or printing. "
        "params.findings lists them.",
    )
    FLOW_NOT_FOUND = ("flow.not_found", 404, "No flow has this id.")
    FLOW_VERSION_NOT_FOUND = ("flow.version_not_found", 404, "The flow has no such version.")
    FLOW_IN_USE = (
        "flow.in_use",
        409,
        "A deployment uses the flow; roll it back before deleting the flow.",
    )
    FLOW_NO_TRIGGER = (
        "flow.no_trigger",
        422,
        "The flow has no trigger node, so no record can enter it.",
    )
    FLOW_NOT_RUNNABLE = (
        "flow.not_runnable",
        422,
        "The flow version cannot run: its wires form a cycle (params.findings). Fix it before "
        "a dry run or a deployment.",
    )
    FLOW_PATH_REFUSED = (
        "flow.path_refused",
        422,
        "A folder trigger's path (or a constant action.file path) could reach outside the "
        "folders a Runner's site allowed: a `..` segment, a drive or `:`, a network or device "
        "path, a NUL or control character, a leading `~`, a Windows device name, or an "
        "absolute action.file path. Nothing was saved; params.findings names each path. An "
        "absolute folder is allowed: the Runner decides at run time whether it lies inside its "
        "allowed roots.",
    )
    DEPLOYMENT_NOT_FOUND = ("deployment.not_found", 404, "No deployment has this id.")
    DEPLOYMENT_FLOW_HAS_ERRORS = (
        "deployment.flow_has_errors",
        422,
        "The flow version has lint errors; params.findings.",
    )
    DEPLOYMENT_STAGE_NOT_AWAITING = (
        "deployment.stage_not_awaiting",
        409,
        "That stage is not the one awaiting approval.",
    )
    DEPLOYMENT_ENDED = (
        "deployment.ended",
        409,
        "The deployment was rolled back or superseded already.",
    )
    DEPLOYMENT_PRINTER_NOT_FOUND = (
        "deployment.printer_not_found",
        404,
        "The deployment assigns no printer to this alias.",
    )
    DEPLOYMENT_PRINTER_UNASSIGNED = (
        "deployment.printer_unassigned",
        409,
        "The flow prints to an alias this deployment assigns no printer to.",
    )
    IMPORT_TOO_LARGE = (
        "import.too_large",
        413,
        "The file, or what its compression expands to, exceeds the import size limit.",
    )
    IMPORT_UNREADABLE = (
        "import.unreadable",
        422,
        "The file is neither a ZPL format nor a gLabels document, or it is broken; "
        "params.reason says how.",
    )
    IMPORT_UNSAFE_XML = (
        "import.unsafe_xml",
        422,
        "The XML declares a DTD, entities or external references; they are never resolved.",
    )
    IMPORT_TOO_COMPLEX = (
        "import.too_complex",
        422,
        "Too deeply nested XML, or too many elements, labels or objects in one file.",
    )
    IMPORT_GRAPHIC_INVALID = (
        "import.graphic_invalid",
        422,
        "A ^GF graphic declares more bytes than it carries, is corrupt, or is larger than a label.",
    )
    IMPORT_SIZE_INVALID = (
        "import.size_invalid",
        422,
        "A label size (^PW/^LL, a gLabels template) is zero, negative or beyond 1000 mm.",
    )
    IMPORT_EMPTY = ("import.empty", 422, "The file holds no label to import.")
    VORLAGE_NOT_FOUND = (
        "vorlage.not_found",
        404,
        "No Vorlage has this id; listLabelVorlagen lists them.",
    )
    PRESET_NOT_FOUND = (
        "preset.not_found",
        404,
        "No media preset has this id; listMediaPresets lists them.",
    )
    POLICY_NOT_FOUND = ("policy.not_found", 404, "No policy has this name.")
    POLICY_HUMAN_REQUIRED = (
        "policy.human_required",
        403,
        "The approval policy requires a person (a session), not an agent.",
    )
    CEL_INVALID = (
        "cel.invalid",
        422,
        "The CEL expression does not compile or evaluate; params line, column.",
    )
    CEL_LIMIT_EXCEEDED = (
        "cel.limit_exceeded",
        422,
        "The CEL expression exceeds what one evaluation may cost; params.limit names the limit "
        "(source, depth, variables, size, work or time).",
    )
    RUNNER_GROUP_NOT_FOUND = ("runner_group.not_found", 404, "No Runner group has this id.")
    RUNNER_GROUP_NO_ONLINE_RUNNER = (
        "runner_group.no_online_runner",
        409,
        "No Runner of the group is online to search.",
    )
    RUNNER_NOT_FOUND = ("runner.not_found", 404, "No Runner has this id.")
    RUNNER_NOT_ACTIVE = ("runner.not_active", 409, "The Runner's enrollment is not approved yet.")
    RUNNER_CERTIFICATE_REQUIRED = (
        "runner.certificate_required",
        401,
        "The agent channel needs the Runner's client certificate.",
    )
    RUNNER_CERTIFICATE_INVALID = (
        "runner.certificate_invalid",
        401,
        "The client certificate was not issued by this service.",
    )
    RUNNER_CERTIFICATE_EXPIRED = (
        "runner.certificate_expired",
        401,
        "The client certificate has expired.",
    )
    RUNNER_CERTIFICATE_REVOKED = (
        "runner.certificate_revoked",
        401,
        "The certificate is no longer the Runner's.",
    )
    RUNNER_DEPLOYMENT_NOT_RUNNING = (
        "runner.deployment_not_running",
        403,
        "The deployment does not run in this Runner's group now: its stage is not approved, "
        "or it was rolled back or superseded there. Its prints are refused (audited).",
    )
    RUNNER_PRINT_NOT_IN_FLOW = (
        "runner.print_not_in_flow",
        403,
        "The deployed flow version has no action.print of this label (as it names it, "
        "`lbl_…` or `lbl_…@N`) to this printer alias. Refused and audited.",
    )
    RUNNER_COUNTER_NOT_IN_FLOW = (
        "runner.counter_not_in_flow",
        403,
        "No label that a flow deployed to the Runner's group prints reads this counter: a "
        "Runner reserves blocks only of the counters its deployed flows use. Refused and audited.",
    )
    RUNNER_REMOVED = ("runner.removed", 401, "The Runner of this certificate was removed.")
    RUNNER_QUEUE_ACCESS_UNAVAILABLE = (
        "runner.queue_access_unavailable",
        409,
        "This deployment hands out no credentials for Runners' queues (no RunnerQueueRole): "
        "claim jobs through the agent channel's long poll instead.",
    )
    ENROLLMENT_TOKEN_INVALID = (
        "enrollment.token_invalid",
        401,
        "The enrollment token is unknown or missing.",
    )
    ENROLLMENT_TOKEN_USED = ("enrollment.token_used", 401, "The enrollment token was used already.")
    ENROLLMENT_TOKEN_EXPIRED = (
        "enrollment.token_expired",
        401,
        "The enrollment token has expired.",
    )
    ENROLLMENT_SECRET_INVALID = (
        "enrollment.secret_invalid",
        401,
        "The enrollment secret does not match.",
    )
    ENROLLMENT_NOT_FOUND = ("enrollment.not_found", 404, "No enrollment has this id.")
    ENROLLMENT_RUNNER_REMOVED = (
        "enrollment.runner_removed",
        409,
        "The enrollment's Runner was removed.",
    )
    CONTEXT_NOT_FOUND = ("context.not_found", 404, "No context parameter has this name.")
    CONTEXT_VALUE_TOO_LARGE = (
        "context.value_too_large",
        413,
        "A context parameter's value is over 4 KB as JSON.",
    )
    CONTEXT_TOO_LARGE = (
        "context.too_large",
        422,
        "The context parameters of a deployment, group or Runner would be over 64 KB as JSON "
        "together, or more than 100.",
    )
    RESOURCE_TOO_LARGE = (
        "resource.too_large",
        413,
        "The change would make a stored item larger than the store allows (400 KB).",
    )
    PRINTER_NOT_FOUND = ("printer.not_found", 404, "No printer has this id or name.")
    PRINTER_NAME_TAKEN = ("printer.name_taken", 409, "Another printer has this name.")
    PRINTER_IN_USE = (
        "printer.in_use",
        409,
        "A deployment that is not rolled back or superseded assigns the printer to a flow's "
        "alias (params.deployment_ids); reassign the alias or roll the deployment back first.",
    )
    PRINTER_ADDRESS_REFUSED = (
        "printer.address_refused",
        422,
        "A Runner reaches printers only at private or link-local addresses on printer ports "
        "(9100, 6101, 515 and those the group allows); params.reason says why this one is not.",
    )
    RUNNER_DISCOVERY_THROTTLED = (
        "runner.discovery_throttled",
        429,
        "The Runner discovered a moment ago; retry after the Retry-After header's seconds.",
    )
    FINDING_NOT_FOUND = (
        "finding.not_found",
        404,
        "No discovery finding has this id (they are kept a week).",
    )
    JOB_NOT_FOUND = ("job.not_found", 404, "No job has this id.")
    JOB_NOT_CANCELLABLE = ("job.not_cancellable", 409, "The job's bytes reached a printer already.")
    JOB_FINISHED = ("job.finished", 409, "The job has a final outcome already.")
    JOB_OTHER_RUNNER = ("job.other_runner", 403, "The job belongs to another Runner.")
    JOB_NOT_PRINTER_DATA = (
        "job.not_printer_data",
        422,
        "A raw job's bytes are not in the printer's language as that language frames them "
        "(ZPL ^XA…^XZ, ~ and SGD ! U1 commands; TSPL; EPL2); params.reason says why.",
    )
    WEBHOOK_NOT_FOUND = ("webhook.not_found", 404, "No webhook receiver has this id.")
    WEBHOOK_URL_REFUSED = (
        "webhook.url_refused",
        422,
        "The webhook URL is neither HTTPS nor plain HTTP to loopback (or is malformed).",
    )
    PRINT_LABEL_NOT_RELEASED = (
        "print.label_not_released",
        409,
        "The label has no released version, or version N is not approved.",
    )
    PRINT_VARIABLES_INVALID = (
        "print.variables_invalid",
        422,
        "Print data does not fit the label; params.errors names record and variable.",
    )
    PRINT_TOO_MANY_RECORDS = (
        "print.too_many_records",
        413,
        "More than 10,000 records in one print request.",
    )
    PRINT_DENSITY_MISMATCH = (
        "print.density_mismatch",
        409,
        "The printer's density differs from the label's.",
    )
    PRINT_IDEMPOTENCY_CONFLICT = (
        "print.idempotency_conflict",
        409,
        "The idempotency key was used with another request body.",
    )
    PRINT_IN_PROGRESS = (
        "print.in_progress",
        409,
        "A request with this idempotency key is still running.",
    )
    ARCHIVE_NOT_FOUND = ("archive.not_found", 404, "No print-archive entry has this id.")
    COUNTER_NOT_FOUND = ("counter.not_found", 404, "No counter has this name.")
    COUNTER_EXISTS = ("counter.exists", 409, "A counter with this name exists.")
    COUNTER_INACTIVE = (
        "counter.inactive",
        409,
        "The counter is deactivated; prints that need it are refused.",
    )
    CREDENTIAL_NOT_FOUND = ("credential.not_found", 404, "No stored credential has this ref.")
    CREDENTIAL_EXISTS = ("credential.exists", 409, "A credential with this ref exists.")
    CREDENTIAL_ENDPOINT_REFUSED = (
        "credential.endpoint_refused",
        422,
        "The endpoint is not HTTPS (plain HTTP is allowed only to loopback).",
    )
    CREDENTIAL_NOT_SECRET = (
        "credential.not_secret",
        422,
        "The credential is a language model; a flow's action.http needs a `secret`.",
    )
    CREDENTIAL_NOT_LANGUAGE_MODEL = (
        "credential.not_language_model",
        422,
        "The credential named is a secret, not a language model.",
    )
    CREDENTIAL_PASSPHRASE_WEAK = (
        "credential.passphrase_weak",
        422,
        "The passphrase protecting a master-key export is too short or too simple.",
    )
    AI_NO_CREDENTIAL = (
        "ai.no_credential",
        409,
        "No language-model credential to use: name one, mark one as default, or create one.",
    )
    AI_PROVIDER_UNSUPPORTED = (
        "ai.provider_unsupported",
        422,
        "The credential's provider cannot do this (generic-json explains; it has no tool use).",
    )
    AI_UNREACHABLE = (
        "ai.unreachable",
        502,
        "The language model could not be reached, did not answer in time, or failed (5xx); or "
        "its endpoint resolves to an address the service does not connect to.",
    )
    AI_UNAUTHORIZED = (
        "ai.unauthorized",
        502,
        "The language model refused the credential's API key (401/403).",
    )
    AI_RATE_LIMITED = (
        "ai.rate_limited",
        503,
        "The language model kept answering 429 after the bounded retries; try again later.",
    )
    AI_BAD_RESPONSE = (
        "ai.bad_response",
        502,
        "The language model's answer could not be used (malformed, unexpected status, or a "
        "proposal that failed validation twice).",
    )
    RESOURCE_NOT_FOUND = ("resource.not_found", 404, "The resource does not exist.")
    SERVICE_BUSY = (
        "service.busy",
        503,
        "The database or a queue throttled this request, or did not answer in time, beyond the "
        "retries; retry after the Retry-After header's seconds (a change is written in one "
        "transaction: whole or not at all; a print retried with its idempotency key prints "
        "once).",
    )
    INTERNAL_ERROR = (
        "internal.error",
        500,
        "An unexpected error; the request id identifies it in the logs.",
    )
