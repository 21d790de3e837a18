"""The playback scheduler: due times at each speed, the idle cap, and where steps land."""

from __future__ import annotations

import pytest

from inspector.core.events import (
    Event,
    StepFinished,
    StepStarted,
    TextDelta,
    ToolCallDelta,
    VerdictsReady,
)
from inspector.core.records import Step, StepRequest
from inspector.reports.playback_schedule import (
    IDLE_CAP_MS,
    SPEEDS,
    Schedule,
    position_text,
    speed_factor,
)
from inspector.reports.synthetic_events import TimedEvent, events_from_record
from tests.helpers.runs import demo_record

RUN = "r1"


def _started(index: int) -> StepStarted:
    return StepStarted(
        run_id=RUN, index=index, attempt=1, request=StepRequest(system="", messages=[])
    )


def _finished(index: int) -> StepFinished:
    step = Step(
        index=index, attempt=1, status="success", request=StepRequest(system="", messages=[])
    )
    return StepFinished(run_id=RUN, step=step)


def _text(index: int, text: str = "x") -> TextDelta:
    return TextDelta(run_id=RUN, index=index, text=text)


def _timed(*pairs: tuple[float, Event]) -> list[TimedEvent]:
    return [TimedEvent(t, e) for t, e in pairs]


def test_due_times_follow_the_recorded_gaps_divided_by_the_speed() -> None:
    schedule = Schedule.of(_timed((0, _started(1)), (100, _text(1)), (300, _text(1))))
    assert [schedule.due_ms(0, p, 1.0) for p in range(3)] == [0, 100, 300]
    assert [schedule.due_ms(0, p, 4.0) for p in range(3)] == [0, 25, 75]
    assert [schedule.due_ms(0, p, 0.25) for p in range(3)] == [0, 400, 1200]
    # Restarted at position 2 (two events applied): the next is due after its own gap only.
    assert schedule.due_ms(2, 2, 1.0) == 200
    assert all(schedule.due_ms(0, p, None) == 0 for p in range(3))  # "max"


def test_idle_gaps_are_capped_before_the_speed_applies() -> None:
    schedule = Schedule.of(_timed((0, _started(1)), (60_000, _text(1)), (60_200, _text(1))))
    assert schedule.due_ms(0, 1, 1.0) == IDLE_CAP_MS
    assert schedule.due_ms(0, 2, 1.0) == IDLE_CAP_MS + 200
    assert schedule.due_ms(0, 1, 0.5) == 2 * IDLE_CAP_MS
    # The clock shown is the recorded one, not the capped one.
    assert position_text(schedule, 2) == "event 2 / 3 · 60.0 s / 60.2 s"


def test_a_step_forward_lands_after_one_event_or_after_one_steps_whole_stream() -> None:
    events = _timed(
        (0, _started(1)),
        (1, _text(1)),
        (2, _text(1)),
        (3, ToolCallDelta(run_id=RUN, index=1, call_index=0, name="f")),
        (4, VerdictsReady(run_id=RUN, index=1, verdicts=[])),
        (5, _finished(1)),
        (6, _started(2)),
        (7, _text(2)),
        (8, _finished(2)),
    )
    schedule = Schedule.of(events)
    walked = [0]
    while walked[-1] < len(schedule):
        walked.append(schedule.next_stop(walked[-1]))
    assert walked == [0, 1, 4, 5, 6, 7, 8, 9]  # the three deltas of step 1 are one stop
    back = [len(schedule)]
    while back[-1] > 0:
        back.append(schedule.previous_stop(back[-1]))
    assert back == walked[::-1]
    # From inside a stream (after a seek), forward finishes it and back returns to its start.
    assert schedule.next_stop(2) == 4
    assert schedule.previous_stop(3) == 1


def test_deltas_of_two_steps_in_a_row_are_two_stops() -> None:
    schedule = Schedule.of(_timed((0, _text(1)), (1, _text(1)), (2, _text(2)), (3, _text(2))))
    assert schedule.stops == (0, 2, 4)


def test_an_empty_recording_has_nowhere_to_go() -> None:
    schedule = Schedule.of([])
    assert len(schedule) == 0 and schedule.stops == (0,)
    assert schedule.next_stop(0) == 0 and schedule.previous_stop(0) == 0
    assert position_text(schedule, 0) == "event 0 / 0 · 0.0 s / 0.0 s"


def test_speed_labels() -> None:
    assert [label for label, _ in SPEEDS] == ["0.25×", "0.5×", "1×", "2×", "4×", "8×", "max"]
    assert speed_factor("2×") == 2.0 and speed_factor("max") is None
    with pytest.raises(KeyError):
        speed_factor("3×")


async def test_stepping_through_the_retry_demo_stops_at_every_event_but_deltas() -> None:
    record = await demo_record("retry-feedback")
    events = events_from_record(record)
    schedule = Schedule.of(events)
    kinds = [e.event.kind for e in events]
    # Rebuilt events carry each stream as one delta: every position is a stop.
    assert schedule.stops == tuple(range(len(kinds) + 1))
    assert "attempt_cleared" in kinds and "feedback_injected" in kinds
