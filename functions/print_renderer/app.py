"""Lambda entry of the print renderer: renders large print jobs from the print-render queue."""

from etikett import coldstart

coldstart.libraries(*coldstart.API_LIBRARIES, *coldstart.TABLE_LIBRARIES)

from etikett.api.entry import sqs_handler
from etikett.domain.printing.print_rendering import render_queued

handler = sqs_handler(lambda body: render_queued(body["job_id"]), "print-renderer")
coldstart.done()
