"""`idempotency_key` on print requests, with Powertools Idempotency on DynamoDB: the same caller,
key and body answer the first answer, with the job's status as it is now, and print nothing
more; another body under the same key is refused, as is a retry while the first request is
still running."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from etikett.domain.actors import Invocation
from etikett.domain.printing import jobs, printing
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


def submit_once(
    invocation: Invocation, request: printing.PrintRequest, lambda_context: Any | None
) -> dict[str, Any]:
    # Loaded here, not at the mcp and printing functions' cold start.
    from aws_lambda_powertools.utilities.idempotency import idempotent_function
    from aws_lambda_powertools.utilities.idempotency.exceptions import (
        IdempotencyAlreadyInProgressError,
        IdempotencyValidationError,
    )

    settings = _config()
    if lambda_context is not None and hasattr(lambda_context, "get_remaining_time_in_millis"):
        settings.register_lambda_context(lambda_context)  # a crash frees the key in time

    printed: list[bool] = []

    def submit(envelope: dict[str, Any]) -> dict[str, Any]:
        printed.append(True)
        return printing.submit(invocation, request).model_dump()

    print_once: Callable[..., dict[str, Any]] = idempotent_function(
        data_keyword_argument="envelope",
        config=settings,
        persistence_store=idempotency.persistence(),
    )(submit)

    caller = invocation.caller
    assert caller is not None
    envelope = {
        "caller": caller.subject,
        "key": request.idempotency_key,
        "request": request.model_dump(mode="json", exclude={"idempotency_key"}),
    }
    try:
        answer = print_once(envelope=envelope)
    except IdempotencyValidationError:
        raise Conflict(
            "This idempotency key was used for another request.",
            ProblemCode.PRINT_IDEMPOTENCY_CONFLICT,
            idempotency_key=request.idempotency_key,
        ) from None
    except IdempotencyAlreadyInProgressError:
        raise Conflict(
            "A request with this idempotency key is still running; retry shortly.",
            ProblemCode.PRINT_IN_PROGRESS,
            idempotency_key=request.idempotency_key,
        ) from None
    if printed:
        return answer

    return {**answer, "status": jobs.load(str(answer["job_id"])).status}
