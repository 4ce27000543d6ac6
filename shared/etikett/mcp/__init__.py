"""The MCP endpoint: every permitted API operation as a tool, generated from the OpenAPI document
and executed in process through the same routes (and role checks) as REST."""
