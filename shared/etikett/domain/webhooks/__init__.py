"""Webhooks: receivers, the outgoing event catalog, the fan-out of an event to its receivers and
its delivery."""
