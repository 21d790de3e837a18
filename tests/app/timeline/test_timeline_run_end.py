"""The end of a live run (``RunFinished``) touches the timeline's rows only when the record
changed them: a 100,000-step run must not be walked again on the UI thread."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from inspector.app.timeline.timeline_item_model import TimelineItemModel
from inspector.core.events import RunFinished
from inspector.core.live import LiveRun
from tests.helpers.demo_events import demo_run


def streamed(model: TimelineItemModel, demo: str) -> tuple[LiveRun, RunFinished]:
    events, _ = demo_run(demo)
    live = LiveRun()
    model.show_run(live)
    for event in events[:-1]:
        live.apply(event)
        model.on_event(event)
    end = events[-1]
    assert isinstance(end, RunFinished)
    return live, end


@pytest.mark.parametrize("demo", ["retry-feedback", "step-cap"])
def test_run_finished_as_streamed_takes_no_step_again(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch, demo: str
) -> None:
    model = TimelineItemModel()
    live, end = streamed(model, demo)
    rows = model.rowCount()
    taken: list[int] = []
    take = model._take
    monkeypatch.setattr(
        model, "_take", lambda steps, *a, **k: taken.append(len(steps)) or take(steps, *a, **k)
    )
    with qtbot.assertNotEmitted(model.modelAboutToBeReset):
        live.apply(end)
        model.on_event(end)
    assert live.resynced == [] and taken == [] and model.rowCount() == rows


def test_run_finished_with_a_changed_step_still_resyncs(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = TimelineItemModel()
    live, end = streamed(model, "retry-feedback")
    steps = list(end.record.steps)
    steps[-1] = steps[-1].model_copy(update={"latency_ms": 1.0})
    changed = RunFinished(run_id=end.run_id, record=end.record.model_copy(update={"steps": steps}))
    taken: list[int] = []
    take = model._take
    monkeypatch.setattr(
        model, "_take", lambda steps, *a, **k: taken.append(len(steps)) or take(steps, *a, **k)
    )
    live.apply(changed)
    model.on_event(changed)
    assert live.resynced == [len(steps)] and taken == [len(steps)]
