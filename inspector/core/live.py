"""A run as far as its events have gone: what a live view shows before ``RunFinished``.

``LiveRun.apply(event)`` folds one engine event in; ``LiveRun.from_record(record)`` is the same
state for a finished (stored) run. Views render ``LiveRun`` the same way in both cases, so a
stored run and a run streaming now look alike. Pure Python: the GUI, playback and tests share it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import is_not
from typing import Any

from inspector.core.events import (
    AttemptCleared,
    Event,
    FallbackUsed,
    FeedbackInjected,
    ReasoningDelta,
    RunFinished,
    RunStarted,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallDelta,
    ToolExecuted,
    VerdictsReady,
)
from inspector.core.messages import Message, ToolCall
from inspector.core.records import (
    Forced,
    RunRecord,
    Step,
    StepRequest,
    StepResponse,
    StepStatus,
    ToolResult,
    Verdict,
)


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class LiveStep:
    """One step: final once ``step`` is set, else pending with what has streamed so far."""

    index: int
    attempt: int
    request: StepRequest
    forced: Forced | None = None
    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    tool_results: list[ToolResult] = field(default_factory=list)
    verdicts: list[Verdict] = field(default_factory=list)
    feedback: list[Message] = field(default_factory=list)
    cleared: bool = False
    step: Step | None = None  # the final step, from StepFinished or a stored record

    @property
    def status(self) -> StepStatus:
        return self.step.status if self.step is not None else "pending"

    @property
    def pending(self) -> bool:
        return self.step is None

    def as_step(self) -> Step:
        """The final step, or a ``pending`` one built from what has arrived so far."""
        if self.step is not None:
            return self.step
        calls = [
            ToolCall(id=c.id, name=c.name, arguments="".join(c.arguments))
            for _, c in sorted(self.calls.items())
        ]
        response = StepResponse(
            text="".join(self.text),
            tool_calls=calls,
            reasoning="".join(self.reasoning) or None,
        )
        return Step(
            index=self.index,
            attempt=self.attempt,
            status="pending",
            request=self.request,
            response=response,
            tool_results=list(self.tool_results),
            verdicts=list(self.verdicts),
            feedback=list(self.feedback),
            forced=self.forced,
            cleared=self.cleared,
        )

    @classmethod
    def from_step(cls, step: Step) -> LiveStep:
        return cls(
            index=step.index,
            attempt=step.attempt,
            request=step.request,
            forced=step.forced,
            tool_results=list(step.tool_results),
            verdicts=list(step.verdicts),
            feedback=list(step.feedback),
            cleared=step.cleared,
            step=step,
        )


@dataclass
class LiveRun:
    run_id: str = ""
    header: RunStarted | None = None
    steps: list[LiveStep] = field(default_factory=list)
    fallback: Any = None
    record: RunRecord | None = None  # set by RunFinished (or from_record): the run is over
    # Set by RunFinished: indices of the steps the record replaced (None: all of them, in a
    # new ``steps`` list). The others are the very ``Step`` objects their StepFinished carried.
    resynced: list[int] | None = None
    # The final Step of each step so far, by position (None: pending); compared with the
    # record's steps by identity at RunFinished, in C (a loop over 100,000 LiveSteps: ~50 ms).
    finals: list[Step | None] = field(default_factory=list, repr=False)
    # Opened from the store's light read (core/lazy_steps.py): each step is built when read,
    # its request a stand-in, until ``fill`` puts the full record in.
    light: bool = False

    @property
    def finished(self) -> bool:
        return self.record is not None

    @classmethod
    def from_record(cls, record: RunRecord) -> LiveRun:
        return cls(
            run_id=record.run_id,
            steps=[LiveStep.from_step(s) for s in record.steps],
            record=record,
            finals=list(record.steps),
        )

    def fill(self, full: LiveRun) -> None:
        """The full fold of the same stored run replaces a light run's steps and record, in
        place (views holding this run keep it): the rows stay the ones the light read gave."""
        self.steps, self.finals, self.record = full.steps, full.finals, full.record
        self.header, self.fallback, self.light = full.header, full.fallback, False

    def step(self, index: int) -> LiveStep | None:
        """The step with this 1-based index (steps arrive in order, so it is at ``index - 1``)."""
        if 1 <= index <= len(self.steps):
            return self.steps[index - 1]
        return None

    def apply(self, event: Event) -> int | None:
        """Folds ``event`` in; returns the index of the step it changed (None: the run header,
        a fallback, the end of the run, or an event for a step this state never saw).

        Deltas stay as lists of pieces (joined only by ``as_step``), so folding a long stream
        costs O(1) per event."""
        if isinstance(event, RunStarted):
            self.run_id, self.header = event.run_id, event
            return None
        if isinstance(event, StepStarted):
            live = LiveStep(event.index, event.attempt, event.request, event.forced)
            self.steps.append(live)
            self.finals.append(None)
            return event.index
        if isinstance(event, RunFinished):
            self.record = event.record
            self.resynced = self._resync(event.record.steps)
            return None
        if isinstance(event, FallbackUsed):
            self.fallback = event.value
            return None
        return self._apply_to_step(event)

    def _resync(self, steps: list[Step]) -> list[int] | None:
        """The record is the truth: a step whose final form is not the one its ``StepFinished``
        carried (feedback or ``cleared`` set late, a step never streamed) is replaced; the rest
        stay as they are: the end of a long run is one identity scan in C, not a rebuild.
        Returns the indices replaced, or None when the step count differs (a new list)."""
        live, finals = self.steps, self.finals
        if len(live) != len(steps) or len(finals) != len(steps):
            self.steps = [LiveStep.from_step(s) for s in steps]
            self.finals = list(steps)
            return None
        if not any(map(is_not, finals, steps)):  # the usual end: every step as it streamed
            return []
        changed = [n for n, other in enumerate(map(is_not, finals, steps)) if other]
        for n in changed:
            live[n] = LiveStep.from_step(steps[n])
            finals[n] = steps[n]
        return [n + 1 for n in changed]

    def _apply_to_step(self, event: Event) -> int | None:
        index: int = (
            event.step.index if isinstance(event, StepFinished) else getattr(event, "index", 0)
        )
        live = self.step(index)
        if live is None:
            return None
        if isinstance(event, TextDelta):
            live.text.append(event.text)
        elif isinstance(event, ReasoningDelta):
            live.reasoning.append(event.text)
        elif isinstance(event, ToolCallDelta):
            call = live.calls.setdefault(event.call_index, _PartialCall())
            call.id = event.id or call.id
            call.name = event.name or call.name
            call.arguments.append(event.arguments_delta)
        elif isinstance(event, ToolExecuted):
            live.tool_results.append(event.result)
        elif isinstance(event, VerdictsReady):
            live.verdicts = list(event.verdicts)
        elif isinstance(event, FeedbackInjected):
            live.feedback = list(event.messages)
        elif isinstance(event, AttemptCleared):  # the rejected candidate step, as in the record
            live.cleared = True
        elif isinstance(event, StepFinished):
            live.step = self.finals[index - 1] = event.step
            live.text, live.reasoning, live.calls = [], [], {}  # the step has them now
            live.tool_results = list(event.step.tool_results)
            live.verdicts = list(event.step.verdicts)
            live.feedback = list(event.step.feedback)
            live.cleared = event.step.cleared
        return index
