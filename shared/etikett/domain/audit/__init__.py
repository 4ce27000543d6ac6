"""The audit log: the entries every mutating operation writes, and reading them back."""
