"""The events a finished run would have published, rebuilt from its record.

For a run stored without its event log (an older store, an imported record): export and playback
then work the same as for a recorded stream. What cannot be rebuilt is the streaming itself —
each step's text arrives as one delta — and the times, which are laid out from the steps'
latencies (``t_ms`` from the run's start). Folding these events into ``LiveRun`` gives the
record's steps back, and the last event carries the record itself.
"""

from __future__ import annotations

from dataclasses import dataclass

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
from inspector.core.records import RunRecord, Step


@dataclass(frozen=True)
class TimedEvent:
    """An event and when it happened, in ms from the run's start (the store's ``StoredEvent``
    has the same two attributes, so exporters take either)."""

    t_ms: float
    event: Event


def events_from_record(record: RunRecord) -> list[TimedEvent]:
    run_id = record.run_id
    out = [TimedEvent(0.0, _run_started(record))]
    t = 0.0
    for step in record.steps:
        events = _step_events(run_id, step)
        latency = step.latency_ms or 0.0
        # The request leaves at ``t``; everything after it lands when the step's call ended.
        out.append(TimedEvent(round(t, 3), events[0]))
        t += latency
        out.extend(TimedEvent(round(t, 3), e) for e in events[1:])
    end = round(max(record.duration_ms, t), 3)
    if record.status == "fallback":
        trigger = str(record.fallback_trigger or record.termination)
        used = FallbackUsed(run_id=run_id, value=record.output, trigger=trigger)
        out.append(TimedEvent(end, used))
    out.append(TimedEvent(end, RunFinished(run_id=run_id, record=record)))
    return out


def _run_started(record: RunRecord) -> RunStarted:
    return RunStarted.from_record(record)


def _step_events(run_id: str, step: Step) -> list[Event]:
    """In the engine's order: started, the stream, verdicts, tools, clearing, feedback, finished."""
    index = step.index
    events: list[Event] = [
        StepStarted(
            run_id=run_id,
            index=index,
            attempt=step.attempt,
            request=step.request,
            forced=step.forced,
        )
    ]
    response = step.response
    if response is not None:
        if response.reasoning:
            events.append(ReasoningDelta(run_id=run_id, index=index, text=response.reasoning))
        if response.text:
            events.append(TextDelta(run_id=run_id, index=index, text=response.text))
        for position, call in enumerate(response.tool_calls):
            events.append(
                ToolCallDelta(
                    run_id=run_id,
                    index=index,
                    call_index=position,
                    id=call.id,
                    name=call.name,
                    arguments_delta=call.arguments_json(),
                )
            )
    if step.verdicts:
        events.append(VerdictsReady(run_id=run_id, index=index, verdicts=step.verdicts))
    events.extend(ToolExecuted(run_id=run_id, index=index, result=r) for r in step.tool_results)
    if step.cleared:
        events.append(AttemptCleared(run_id=run_id, index=index, attempt=step.attempt))
    if step.feedback:
        events.append(FeedbackInjected(run_id=run_id, index=index, messages=step.feedback))
    events.append(StepFinished(run_id=run_id, step=step))
    return events
