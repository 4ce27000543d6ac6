"""The AI helpers: lint explanations, audit-log questions and the Copilots, over what they
share (which model, which credential)."""
