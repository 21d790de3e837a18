"""LiveRun folds a turn's events into the same steps the finished record has."""

from __future__ import annotations

from inspector.core.events import Event, StepFinished, TextDelta
from inspector.core.live import LiveRun
from inspector.core.loop import run_turn
from inspector.providers.factory import build_provider
from inspector.resources import resolve_scenario


async def _events(demo: str) -> tuple[list[Event], object]:
    scenario = resolve_scenario(f"demo:{demo}")
    events: list[Event] = []
    record = await run_turn(scenario, build_provider(scenario), events.append)
    return events, record


async def test_folding_every_event_gives_the_records_steps() -> None:
    events, record = await _events("retry-feedback")
    live = LiveRun()
    for event in events[:-1]:  # everything but RunFinished
        live.apply(event)
    assert not live.finished
    assert [s.as_step() for s in live.steps] == record.steps  # type: ignore[attr-defined]
    assert any(s.cleared for s in live.steps)
    live.apply(events[-1])
    assert live.finished and live.record == record


async def test_a_pending_step_shows_what_has_streamed_so_far() -> None:
    events, _ = await _events("retry-feedback")
    live = LiveRun()
    first_finish = next(i for i, e in enumerate(events) if isinstance(e, StepFinished))
    for event in events[:first_finish]:
        live.apply(event)
    step = live.steps[0].as_step()
    assert step.status == "pending"
    streamed = "".join(e.text for e in events[:first_finish] if isinstance(e, TextDelta))
    assert step.response is not None and step.response.text == streamed


async def test_from_record_equals_the_folded_state() -> None:
    events, record = await _events("step-cap")
    live = LiveRun()
    for event in events:
        live.apply(event)
    stored = LiveRun.from_record(record)  # type: ignore[arg-type]
    assert [s.as_step() for s in stored.steps] == [s.as_step() for s in live.steps]


def test_events_for_unknown_steps_are_ignored() -> None:
    assert LiveRun().apply(TextDelta(run_id="r", index=3, text="x")) is None
