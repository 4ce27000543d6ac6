"""Language models: the three wire formats the service speaks and the one way it calls them.

`conversation` holds the neutral shapes (a request with an optional tool, a reply with tool
calls); `anthropic_messages`, `openai_chat` and `generic_json` turn them into each provider's
HTTP request and parse its answer with pydantic models of that wire format; `client.complete`
sends it through the pinned outgoing client with timeouts and bounded retries, and maps every
failure to a problem code (`ai.unreachable`, `ai.unauthorized`, `ai.rate_limited`,
`ai.bad_response`), never a 500. This package knows nothing of credentials, labels or flows.
"""
