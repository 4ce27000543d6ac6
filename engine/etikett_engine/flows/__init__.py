"""The one flow engine: lint and execution of flow documents on records.

Pure Python over pydantic and CEL: no web framework, no AWS. The service runs it for dry runs
(side effects listed, never performed); the Runner runs it for real, with its own `Effects`.
"""
