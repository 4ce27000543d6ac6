"""Flows: documents and versions, lint with the service's labels and secrets, dry runs and
the record of runs."""
