"""How a proxied step and run end — pure functions, so the rules are stated once and tested
alone (``docs/proxy.md``). The proxy never knows what the client did with a reply, only what it
sent next; so the statuses say exactly what the traffic shows and no more.
"""

from __future__ import annotations

from collections.abc import Sequence

from inspector.core.records import (
    RunError,
    RunStatus,
    Step,
    StepResponse,
    StepStatus,
    Termination,
    Verdict,
)

__all__ = ["is_final_answer", "run_outcome", "step_status"]


def is_final_answer(response: StepResponse) -> bool:
    """A reply that ends the model's side of a turn: no tool call (text, empty, a refusal)."""
    return not response.tool_calls


def step_status(response: StepResponse, verdicts: Sequence[Verdict], rejected: bool) -> StepStatus:
    """A step whose reply arrived whole. ``rejected``: the client answered a final answer with
    a new attempt — its own validator turned it down, as a failing verdict would have."""
    if rejected or any(not v.ok for v in verdicts):
        return "failed_validation"
    if not response.text.strip() and not response.tool_calls and not response.refusal:
        return "empty"
    return "success"


def run_outcome(
    steps: Sequence[Step],
) -> tuple[RunStatus, Termination | None, RunError | None]:
    """A run that went idle (or whose proxy stopped): ``succeeded`` only when its last reply was
    a final answer that no validator failed."""
    if not steps:
        return "error", None, RunError(type="NoCall", message="no model call was recorded")
    last = steps[-1]
    if last.status == "cancelled":
        return (
            "cancelled",
            "cancelled",
            RunError(type="ClientDisconnected", message=last.error or "the client went away"),
        )
    if last.status in ("error", "interrupted"):
        message = last.error or f"step {last.index} ended {last.status}"
        return "error", "provider_error", RunError(type="ProviderError", message=message)
    response = last.response or StepResponse()
    if response.refusal:
        return "failed", "refusal", None
    if not is_final_answer(response):
        message = f"the client sent no further call after the tool call(s) of step {last.index}"
        return "failed", None, RunError(type="ClientStopped", message=message)
    if last.status == "failed_validation":
        return "failed", "validator_exhausted", None
    if last.status == "empty":
        return "failed", "empty_final", None
    return "succeeded", "stop", None
