"""The Runner's tests use the printer simulator and HTTP servers on loopback, which a Runner
refuses unless told so (`--loopback-printers`, `--outgoing-private-networks`); tests about those
refusals set the policy themselves (`etikett_runner.reach.configure`)."""

from __future__ import annotations

import os

os.environ.setdefault("ETIKETT_RUNNER_LOOPBACK_PRINTERS", "1")
os.environ.setdefault("ETIKETT_RUNNER_OUTGOING_PRIVATE_NETWORKS", "1")
