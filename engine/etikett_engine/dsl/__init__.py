"""The documents people and agents edit: label, form (and later flow) documents as pydantic models,
published as JSON Schema 2020-12."""
