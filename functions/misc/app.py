"""Lambda entry of the misc group, which also answers API Gateway's `$default` route.

Unknown paths and wrong methods reach this function through `$default`; its fallback route looks
them up in every group's routes (loaded on the first such request, not at cold start) to answer
a precise 404 `route.not_found` or 405 `route.method_not_allowed`.
"""

from etikett import coldstart

coldstart.libraries(*coldstart.API_LIBRARIES, *coldstart.TABLE_LIBRARIES)

from etikett.api.app import create_app
from etikett.api.entry import http_handler
from etikett.api.groups import routes_of

app = create_app(routes_of("misc"), fallback=True)
handler = http_handler(app, "misc")
coldstart.done()
