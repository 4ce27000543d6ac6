"""Lambda entry of the misc group: version and OpenAPI document, and API Gateway's `$default` route.

Unknown paths and wrong methods reach this function through `$default`; it holds every group's
routes (never executed here: the gateway routes matching requests to their own functions) so it can
answer a precise 404 `route.not_found` or 405 `route.method_not_allowed`.
"""

from etikett.api.app import create_app
from etikett.api.entry import http_handler
from etikett.api.groups import all_routes

app = create_app(*all_routes())
handler = http_handler(app, "misc")
