"""Routes of the AI group: lint explanations, audit-log questions and the Copilots (label, form,
flow), which answer proposals and never save."""

from __future__ import annotations

from typing import Annotated, Any

from etikett.api import ai_examples
from etikett.api.access import requires
from etikett.api.routing import router
from etikett.domain.actors import Invocation
from etikett.domain.assistants import copilots, lint_explanations, log_questions

routes = router(prefix="/api/v1", tags=["AI"])
Designer = Annotated[Invocation, requires("designer")]

_PROVIDER_FAILURES: dict[int | str, dict[str, Any]] = {
    404: {"description": "The named credential does not exist (`credential.not_found`)"},
    409: {"description": "No language-model credential to use (`ai.no_credential`)"},
    502: {
        "description": "The language model failed (`ai.unreachable`, `ai.unauthorized`, "
        "`ai.bad_response`)"
    },
    503: {
        "description": "The language model stayed rate limited after bounded retries "
        "(`ai.rate_limited`, with Retry-After when it said)"
    },
}
_COPILOT = {
    **_PROVIDER_FAILURES,
    422: {
        "description": "Invalid request (`request.invalid`); the credential's provider has no "
        "tool use (`ai.provider_unsupported`) or is a secret "
        "(`credential.not_language_model`)"
    },
}


@routes.post(
    "/ai/lint-erklaerung",
    operation_id="aiLintErklaerung",
    response_model=lint_explanations.LintExplanation,
    summary="Explain a flow or label lint finding in plain words, with suggested JSON Patch "
    "operations checked to apply and keep ids",
    responses={
        **_PROVIDER_FAILURES,
        404: {"description": "Unknown flow, label, version or credential"},
    },
)
def ai_lint_erklaerung(
    body: Annotated[lint_explanations.LintExplanationRequest, ai_examples.LINT_EXPLANATION_REQUEST],
    invocation: Annotated[Invocation, requires("designer", "operator")],
) -> lint_explanations.LintExplanation:
    return lint_explanations.explain_finding(body)


@routes.post(
    "/ai/log-qa",
    operation_id="aiLogQA",
    response_model=log_questions.LogAnswer,
    summary="Answer a question over the audit entries that match structured filters, citing "
    "only their ids",
    responses=_PROVIDER_FAILURES,
)
def ai_log_qa(
    body: Annotated[log_questions.LogQuestion, ai_examples.LOG_QUESTION_REQUEST],
    invocation: Annotated[Invocation, requires("approver", "admin")],
) -> log_questions.LogAnswer:
    return log_questions.answer_question(body)


@routes.post(
    "/labels/{labelId}/copilot",
    operation_id="postLabelCopilot",
    response_model=copilots.CopilotAnswer,
    summary="Propose a change to a label document from an instruction (validated, with a "
    "preview; never saved)",
    responses={**_COPILOT, 404: {"description": "Unknown label, version or credential"}},
)
def post_label_copilot(
    labelId: str,
    body: Annotated[copilots.CopilotRequest, ai_examples.COPILOT_REQUEST],
    invocation: Designer,
) -> copilots.CopilotAnswer:
    return copilots.propose_label(labelId, body)


@routes.post(
    "/labels/{labelId}/form/copilot",
    operation_id="postFormCopilot",
    response_model=copilots.CopilotAnswer,
    summary="Propose a change to a label's form from an instruction (validated; never saved)",
    responses={**_COPILOT, 404: {"description": "Unknown label, form version or credential"}},
)
def post_form_copilot(
    labelId: str,
    body: Annotated[copilots.CopilotRequest, ai_examples.COPILOT_REQUEST],
    invocation: Designer,
) -> copilots.CopilotAnswer:
    return copilots.propose_form(labelId, body)


@routes.post(
    "/flows/{flowId}/copilot",
    operation_id="postFlowCopilot",
    response_model=copilots.CopilotAnswer,
    summary="Propose a change to a flow document from an instruction (validated and linted; "
    "never saved)",
    responses={**_COPILOT, 404: {"description": "Unknown flow, version or credential"}},
)
def post_flow_copilot(
    flowId: str,
    body: Annotated[copilots.CopilotRequest, ai_examples.COPILOT_REQUEST],
    invocation: Designer,
) -> copilots.CopilotAnswer:
    return copilots.propose_flow(flowId, body)
