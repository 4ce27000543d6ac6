"""Test support: the real local service in a subprocess, and an HTTP client for it."""
