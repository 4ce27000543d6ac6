"""Etikett: label design, print automation and print management (the shared first-party package)."""

API_VERSION = "v0.1.0"
