"""Lambda entry of the runners group: its routes behind Mangum, with Powertools observability."""

from etikett import coldstart

coldstart.libraries(*coldstart.API_LIBRARIES, *coldstart.TABLE_LIBRARIES)

from etikett.api.app import create_app
from etikett.api.entry import http_handler
from etikett.api.groups import routes_of

app = create_app(routes_of("runners"))
handler = http_handler(app, "runners")
coldstart.done()
