"""The Runner's channel (the agent side): heartbeats, claims and reports, the flows a Runner
runs, queue access, and printer discovery, composed from the aggregates below."""
