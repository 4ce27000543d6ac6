"""Lambda entry of the runner_agent group: the agent channel behind Mangum, with Powertools."""

from etikett import coldstart

coldstart.libraries(*coldstart.API_LIBRARIES, *coldstart.TABLE_LIBRARIES)

from etikett.api.app import create_app
from etikett.api.entry import http_handler
from etikett.api.groups import routes_of

app = create_app(routes_of("runner_agent"))
handler = http_handler(app, "runner_agent")
coldstart.done()
