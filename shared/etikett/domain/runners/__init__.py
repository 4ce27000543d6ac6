"""Runner groups and Runners: enrollment, the service CA, installers, context parameters, and
the notices that their configuration changed; `runner_records` is what other aggregates read."""
