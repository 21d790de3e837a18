"""LiveRun folds a turn's events into the same steps the finished record has."""

from __future__ import annotations

from inspector.core.events import Event, RunFinished, StepFinished, TextDelta
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


async def test_run_finished_keeps_every_step_that_streamed_as_it_is() -> None:
    events, record = await _events("retry-feedback")
    live = LiveRun()
    for event in events[:-1]:
        live.apply(event)
    kept, steps = list(live.steps), live.steps
    live.apply(events[-1])
    assert live.resynced == []  # no step rebuilt: the record holds the very Steps streamed
    assert live.steps is steps and all(a is b for a, b in zip(live.steps, kept, strict=True))
    assert [s.as_step() for s in live.steps] == record.steps  # type: ignore[attr-defined]


async def test_run_finished_replaces_only_the_steps_the_record_changed() -> None:
    events, record = await _events("retry-feedback")
    live = LiveRun()
    for event in events[:-1]:
        live.apply(event)
    kept = list(live.steps)
    steps = list(record.steps)  # type: ignore[attr-defined]
    steps[0] = steps[0].model_copy(update={"cleared": not steps[0].cleared})
    changed = record.model_copy(update={"steps": steps})  # type: ignore[attr-defined]
    live.apply(RunFinished(run_id=live.run_id, record=changed))
    assert live.resynced == [1]
    assert live.steps[0] is not kept[0] and live.steps[0].cleared == steps[0].cleared
    assert all(a is b for a, b in zip(live.steps[1:], kept[1:], strict=True))


async def test_run_finished_with_steps_never_streamed_rebuilds_them_all() -> None:
    events, record = await _events("retry-feedback")
    live = LiveRun()
    first_finish = next(i for i, e in enumerate(events) if isinstance(e, StepFinished))
    for event in events[: first_finish + 1]:
        live.apply(event)
    live.apply(events[-1])
    assert live.resynced is None
    assert [s.as_step() for s in live.steps] == record.steps  # type: ignore[attr-defined]


async def test_a_finished_step_drops_its_streamed_pieces() -> None:
    events, _ = await _events("retry-feedback")
    live = LiveRun()
    first_finish = next(i for i, e in enumerate(events) if isinstance(e, StepFinished))
    for event in events[: first_finish + 1]:
        live.apply(event)
    first = live.steps[0]
    assert first.step is not None and first.text == [] and first.calls == {}
