"""Local mode: the whole service on one machine, from template.yaml, against moto's server."""
