"""Labels and forms: creation, documents and versions, validation, preflight, previews, CEL
trials and import; `label_records` is what other aggregates read."""
