"""Schemathesis hooks of the fuzzing runs (loaded through `SCHEMATHESIS_HOOKS`).

- Cases that would end the fuzzing admin's own access are left out, and only those: a password
  reset, deactivation or role revocation of its own user ends its sessions, and the rest of the
  run would only see 401s. The user id comes from `ETIKETT_FUZZ_PROTECTED` (comma-separated).
- A 5xx is accepted in one case only: a language model that the fuzzer itself configured (a
  credential with a made-up endpoint) failed, and the service says so as the contract
  prescribes (502 `ai.unreachable`/`ai.unauthorized`/`ai.bad_response`, 503 `ai.rate_limited`).
  That is the upstream's failure, reported as documented, not the service's; every other 5xx
  fails the run. Each one accepted is written to `ETIKETT_FUZZ_UPSTREAM_LOG` to be counted.
"""

from __future__ import annotations

import json
import os
from typing import Any

import schemathesis

PROTECTED = frozenset(filter(None, os.environ.get("ETIKETT_FUZZ_PROTECTED", "").split(",")))
UPSTREAM_FAILURES = {
    502: {"ai.unreachable", "ai.unauthorized", "ai.bad_response"},
    503: {"ai.rate_limited"},
}


@schemathesis.hook
def filter_case(context: Any, case: Any) -> bool:
    return not PROTECTED & {str(value) for value in (case.path_parameters or {}).values()}


@schemathesis.hook
def filter_failure(context: Any, failure: Any, case: Any, response: Any) -> bool:
    """False drops the failure: only for a language model's documented failure."""
    if getattr(failure, "code", None) != "ST101":  # Server error
        return True
    code = _problem_code(response)
    if code not in UPSTREAM_FAILURES.get(response.status_code, set()):
        return True
    log = os.environ.get("ETIKETT_FUZZ_UPSTREAM_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as file:
            file.write(f"{response.status_code} {code} {case.operation.label}\n")
    return False


def _problem_code(response: Any) -> str | None:
    content_type = "".join(response.headers.get("content-type", []))
    if not content_type.startswith("application/problem+json"):
        return None
    try:
        return json.loads(response.content).get("code")
    except ValueError:
        return None
