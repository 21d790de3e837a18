"""The ``ctx`` objects user code receives: plain dataclasses of plain values, so that they cross
to the worker process cheaply and the worker needs no pydantic to read them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ValidatorContext:
    """A python validator's ``ctx``: ``attempt`` (1-based), ``step`` (index), ``history`` (the
    messages the model saw, as dicts), ``pending_tool_calls`` and ``stop()``."""

    attempt: int
    step: int
    history: list[dict[str, Any]] = field(default_factory=list)
    pending_tool_calls: list[dict[str, Any]] = field(default_factory=list)
    scenario: str = ""
    stopped: bool = False

    def stop(self) -> None:
        """End the loop after this step, even with pending tool calls."""
        self.stopped = True


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
