"""Typed events the loop emits as a turn progresses. The CLI, the store and the GUI subscribe
through an injected ``EventSink``; every event carries a ``kind`` discriminator."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from inspector.core.errors import last_line
from inspector.core.messages import Message
from inspector.core.policy import Policy
from inspector.core.records import (
    Forced,
    RunRecord,
    Step,
    StepRequest,
    ToolResult,
    Verdict,
)


class _Event(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str


class RunStarted(_Event):
    """The record's header, before the first step: the store writes the run row here."""

    kind: Literal["run_started"] = "run_started"
    scenario: str
    started_at: str
    policy: Policy
    provider: str
    model: str
    replay_of: str | None = None
    scenario_source: dict[str, Any] = Field(default_factory=dict)
    scenario_dir: str = ""
    scenario_origin: str = ""

    @classmethod
    def from_record(cls, record: RunRecord) -> RunStarted:
        """The header a finished record was announced with (imports, synthesized events)."""
        return cls(
            run_id=record.run_id,
            scenario=record.scenario,
            started_at=record.started_at,
            policy=record.policy,
            provider=record.provider,
            model=record.model,
            replay_of=record.replay_of,
            scenario_source=record.scenario_source,
            scenario_dir=record.scenario_dir,
            scenario_origin=record.scenario_origin,
            overrides=record.overrides,
            notes=record.notes,
            via=record.via,
        )

    overrides: list[str] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)
    via: str | None = Field(default=None, exclude_if=lambda v: v is None)  # see RunRecord.via


class StepStarted(_Event):
    """Emitted before the request leaves: the store writes the step row ``pending`` here."""

    kind: Literal["step_started"] = "step_started"
    index: int
    attempt: int
    request: StepRequest
    forced: Forced | None = None


class TextDelta(_Event):
    kind: Literal["text_delta"] = "text_delta"
    index: int
    text: str


class ReasoningDelta(_Event):
    kind: Literal["reasoning_delta"] = "reasoning_delta"
    index: int
    text: str


class ToolCallDelta(_Event):
    kind: Literal["tool_call_delta"] = "tool_call_delta"
    index: int
    call_index: int
    id: str | None = None
    name: str | None = None
    arguments_delta: str = ""


class ToolExecuted(_Event):
    kind: Literal["tool_executed"] = "tool_executed"
    index: int
    result: ToolResult


class VerdictsReady(_Event):
    kind: Literal["verdicts"] = "verdicts"
    index: int
    verdicts: list[Verdict]


class FeedbackInjected(_Event):
    kind: Literal["feedback_injected"] = "feedback_injected"
    index: int
    messages: list[Message]


class AttemptCleared(_Event):
    """A failed candidate was removed from what the end user sees (the record keeps it)."""

    kind: Literal["attempt_cleared"] = "attempt_cleared"
    index: int
    attempt: int


class StepFinished(_Event):
    """The step is final (its status is never ``pending``): the store finalizes the row here."""

    kind: Literal["step_finished"] = "step_finished"
    step: Step


class FallbackUsed(_Event):
    kind: Literal["fallback_used"] = "fallback_used"
    value: Any
    trigger: str


class RunFinished(_Event):
    kind: Literal["run_finished"] = "run_finished"
    record: RunRecord


Event = Annotated[
    RunStarted
    | StepStarted
    | TextDelta
    | ReasoningDelta
    | ToolCallDelta
    | ToolExecuted
    | VerdictsReady
    | FeedbackInjected
    | AttemptCleared
    | StepFinished
    | FallbackUsed
    | RunFinished,
    Field(discriminator="kind"),
]
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)

EventSink = Callable[[Event], None]


def isolate(sink: EventSink) -> EventSink:
    """The sink as the loop calls it: a subscriber that raises is reported once on stderr and
    detached, and the turn goes on — a broken view or store never changes a run's outcome."""
    attached = True

    def emit(event: Event) -> None:
        nonlocal attached
        if not attached:
            return
        try:
            sink(event)
        except Exception as exc:
            attached = False
            print(
                f"agent-inspector: event subscriber failed: {last_line(exc)}; detached",
                file=sys.stderr,
            )

    return emit


def fan_out(*sinks: EventSink) -> EventSink:
    """One sink that feeds several subscribers in order; each is isolated from the others."""
    isolated = [isolate(s) for s in sinks]

    def sink(event: Event) -> None:
        for s in isolated:
            s(event)

    return sink


def discard(event: Event) -> None:
    """A sink that ignores everything."""
