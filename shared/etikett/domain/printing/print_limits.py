"""How many records one print request may carry: read by the print path and by the requests
that feed it (a Runner's flow prints) without importing the print path itself."""

MAX_RECORDS = 10_000
