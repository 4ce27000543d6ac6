"""`idempotency_key` on print requests, with Powertools Idempotency on DynamoDB: the same caller,
key and body answer the first answer, with the job's status as it is now, and print nothing
more; another body under the same key is refused, as is a retry while the first request is
still running."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from etikett import clock
from etikett.domain.actors import Invocation
from etikett.domain.printing import jobs
from etikett.store import idempotency
from etikett_engine.errors import Conflict, ProblemCode

KEY_LIFETIME_SECONDS = 24 * 3600


def _config() -> Any:
    # Loaded here, not at the mcp and printing functions' cold start.
    from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig

    # The key is the caller and their key; the body is checked against the stored request.
    return IdempotencyConfig(
        event_key_jmespath="[caller, key]",
        payload_validation_jmespath="request",
        raise_on_no_idempotency_key=True,
        expires_after_seconds=KEY_LIFETIME_SECONDS,
    )


class _Invocation:
    """What Powertools asks of a Lambda context: how long the invocation has left (`clock`
    knows), so that a request that crashed frees its key when its invocation would have ended."""

    @staticmethod
    def get_remaining_time_in_millis() -> int:
        return clock.remaining_ms() or 0


def once(
    invocation: Invocation,
    key: str,
    request: dict[str, Any],
    submit: Callable[[], dict[str, Any]],
) -> dict[str, Any]:
    """`submit()`'s answer the first time the caller sends `key` with this `request` (its body
    without the key, as JSON); the same answer, with the job's status as it is now, for every
    retry, printing nothing more."""
    # Loaded here, not at the mcp and printing functions' cold start.
    from aws_lambda_powertools.utilities.idempotency import idempotent_function
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError,
        IdempotencyValidationError,
    )

    settings = _config()
    if clock.remaining_ms() is not None:
        settings.register_lambda_context(_Invocation())  # a crash frees the key in time

    printed: list[bool] = []

    def first(envelope: dict[str, Any]) -> dict[str, Any]:
        printed.append(True)
        return submit()

    print_once: Callable[..., dict[str, Any]] = idempotent_function(
        data_keyword_argument="envelope",
        config=settings,
        persistence_store=idempotency.persistence(),
    )(first)

    caller = invocation.caller
    assert caller is not None
    envelope = {
        "caller": caller.subject,
        "key": key,
        "request": request,
    }
    try:
        answer = print_once(envelope=envelope)
    except IdempotencyValidationError:
        raise Conflict(
            "This idempotency key was used for another request.",
            ProblemCode.PRINT_IDEMPOTENCY_CONFLICT,
            idempotency_key=key,
        ) from None
    except IdempotencyAlreadyInProgressError:
        raise Conflict(
            "A request with this idempotency key is still running; retry shortly.",
            ProblemCode.PRINT_IN_PROGRESS,
            idempotency_key=key,
        ) from None
    if printed:
        return answer
    # A replay: the same job, as it is now (a client retrying after a time-out wants to know
    # whether its labels came out, not that they were once queued).
    return {**answer, "status": jobs.load(str(answer["job_id"])).status}
