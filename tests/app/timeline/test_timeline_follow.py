"""A streaming run is followed (scroll to the newest row, select the newest step, the summary)
at most once per ``FOLLOW_MS``, not once per step; at ``RunFinished`` at once; never over a
step the user selected."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from inspector.app.timeline.timeline_view import TimelineView
from inspector.core.events import Event, RunFinished, StepStarted
from inspector.core.live import LiveRun
from tests.helpers.demo_events import demo_run


def deliver(view: TimelineView, live: LiveRun, event: Event) -> None:
    """As the shell does: the run applies the event, the timeline shows it, a new step is
    followed."""
    live.apply(event)
    view.on_event(event)
    if isinstance(event, StepStarted):
        view.follow_newest()


def started(view: TimelineView) -> tuple[LiveRun, StepStarted]:
    events, _ = demo_run("retry-feedback")
    live = LiveRun()
    view.show_run(live)
    deliver(view, live, events[0])  # RunStarted
    first = next(e for e in events if isinstance(e, StepStarted))
    return live, first


def steps(first: StepStarted, numbers: range) -> list[StepStarted]:
    return [first.model_copy(update={"index": n, "attempt": 1}) for n in numbers]


def counting(view: TimelineView, monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"scrollToBottom": 0, "select_last": 0, "_update_summary": 0}
    for name, owner in (
        ("scrollToBottom", view.table),
        ("select_last", view),
        ("_update_summary", view),
    ):
        call = getattr(owner, name)

        def counted(*args: object, _name: str = name, _call: object = call) -> object:
            calls[_name] += 1
            return _call(*args)  # type: ignore[operator]

        monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_burst_of_steps_is_followed_once_not_once_per_step(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    live, first = started(view)
    calls = counting(view, monkeypatch)
    for event in steps(first, range(1, 1_001)):  # one slice: no event-loop turn between
        deliver(view, live, event)
    assert calls == {"scrollToBottom": 0, "select_last": 0, "_update_summary": 0}
    qtbot.waitUntil(lambda: view.selected_step() == 1_000)
    assert calls["select_last"] == 1 and calls["_update_summary"] == 1
    assert calls["scrollToBottom"] <= 1
    assert view.summary.text().startswith("1,000 steps")
    bar = view.table.verticalScrollBar()
    assert bar.maximum() > 0 and bar.value() == bar.maximum()  # the newest row is in view


def test_a_step_the_user_selected_stays_selected_while_steps_stream(qtbot: QtBot) -> None:
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    live, first = started(view)
    for event in steps(first, range(1, 101)):
        deliver(view, live, event)
    qtbot.waitUntil(lambda: view.selected_step() == 100)
    view.select_step(40)  # the user looks at another step
    for event in steps(first, range(101, 201)):
        deliver(view, live, event)
    view.follow_now()
    assert view.selected_step() == 40
    view.select_step(200)  # back on the newest: followed again
    for event in steps(first, range(201, 301)):
        deliver(view, live, event)
    qtbot.waitUntil(lambda: view.selected_step() == 300)


def test_run_finished_shows_the_final_state_at_once(qtbot: QtBot) -> None:
    view = TimelineView()
    qtbot.addWidget(view)
    view.show()
    events, record = demo_run("retry-feedback")
    live = LiveRun()
    view.show_run(live)
    for event in events:
        deliver(view, live, event)
    assert isinstance(events[-1], RunFinished)
    # no event-loop turn since the last event: nothing waits for the follow timer
    assert view.selected_step() == record.steps[-1].index
    steps_shown = len(record.steps)
    assert view.summary.text().startswith(f"{steps_shown} step")


def test_a_due_follow_runs_where_follow_turn_says(qtbot: QtBot) -> None:
    """The shell hands a due follow to its EventPacer (a loop turn without events)."""
    view = TimelineView()
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.show()
    live, first = started(view)
    turns: list[object] = []
    view.follow_turn = turns.append
    for event in steps(first, range(1, 101)):
        deliver(view, live, event)
    qtbot.waitUntil(lambda: turns == [view.follow_now])
    assert view.selected_step() == 0  # not followed until its turn comes
    turns[0]()  # type: ignore[operator]
    assert view.selected_step() == 100
