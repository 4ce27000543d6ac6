"""Printing: print requests, their targets and work, jobs handed to Runners (print, raw), the
archive, idempotency, and what a dry run's print would do."""
