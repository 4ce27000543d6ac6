"""Persistence: pynamodb models, one table per aggregate. Knows nothing of the domain or HTTP."""
