"""Stored credentials (language models, plain secrets) and their envelope encryption."""
