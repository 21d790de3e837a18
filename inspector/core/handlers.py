"""User hooks the loop calls besides validators: the custom feedback builder (B1) and the fallback
function (B5). Each gets a small context object and its result is checked here."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from inspector.core.errors import InspectorError
from inspector.core.messages import Message
from inspector.core.policy import Policy
from inspector.core.records import Termination, Verdict

_MESSAGES: TypeAdapter[list[Message]] = TypeAdapter(list[Message])


class HookError(InspectorError):
    """A user hook raised or returned something unusable; the run ends with status ``error``."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


@dataclass
class FeedbackContext:
    """What ``feedback_builder(ctx)`` gets; it returns the next history (list of message dicts)."""

    attempt: int  # the attempt that just failed
    step: int
    history: list[dict[str, Any]]  # what the model saw on the failed step
    candidate: dict[str, Any] | None  # the rejected assistant message (None for an empty reply)
    verdicts: list[dict[str, Any]]
    feedback: str  # the failing verdicts' feedback text
    default_next: list[dict[str, Any]]  # what accumulate + feedback_role would send next
    prefix: list[dict[str, Any]] = field(default_factory=list)  # the turn's opening messages


@dataclass
class FallbackContext:
    """What ``fallback_function(ctx)`` gets; it returns the fallback output."""

    trigger: str  # validator_exhausted | step_cap | refusal | empty_final
    attempts: int
    steps: int
    last_output: Any
    verdicts: list[dict[str, Any]]
    history: list[dict[str, Any]]


def _last_line(exc: BaseException) -> str:
    text = (str(exc).strip().splitlines() or [""])[-1]
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def build_custom_history(fn: Callable[..., Any], ctx: FeedbackContext) -> list[Message]:
    try:
        result = fn(ctx)
    except Exception as exc:
        raise HookError(
            "FeedbackBuilderError", f"feedback_builder raised {_last_line(exc)}"
        ) from exc
    try:
        return _MESSAGES.validate_python(result)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise HookError(
            "FeedbackBuilderError",
            f"feedback_builder must return a list of messages: [{where}] {first['msg']}",
        ) from None


def call_fallback(fn: Callable[..., Any], ctx: FallbackContext) -> Any:
    try:
        return fn(ctx)
    except Exception as exc:
        raise HookError("FallbackError", f"fallback_function raised {_last_line(exc)}") from exc


def dumps(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [m.model_dump() for m in messages]


def dump_verdicts(verdicts: Sequence[Verdict]) -> list[dict[str, Any]]:
    return [v.model_dump() for v in verdicts]


def choose_handler(trigger: Termination, policy: Policy) -> Literal["raise", "fallback"]:
    """Which handler ends a turn whose retries are over (B5): the step-cap handler for the cap,
    the refusal handler for a refusal it does not retry, the invalid-output handler otherwise."""
    if trigger == "step_cap":
        return policy.on_step_cap
    if trigger == "refusal" and policy.on_refusal != "retry":
        return "fallback" if policy.on_refusal == "fallback" else "raise"
    return policy.on_invalid_output


def failure_kind(trigger: Termination) -> str:
    """The ``error.type`` of a turn a handler ended with ``raise``."""
    kinds = {"step_cap": "StepCapReached", "refusal": "Refusal", "empty_final": "EmptyFinal"}
    return kinds.get(trigger, "ValidatorExhausted")
