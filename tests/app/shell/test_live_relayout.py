"""A streaming run's follows (every ``FOLLOW_MS``: the timeline's summary, the step's title,
the outcome header, the status bar's clock and tokens) repaint their lines without laying the
main window out again (issue 18: each relayout took 3–8 ms)."""

from __future__ import annotations

import pytest
from pytestqt.qtbot import QtBot

from inspector.app.shell.main_window import MainWindow
from inspector.app.timeline.timeline_view import FOLLOW_MS
from inspector.core.events import Event, StepFinished, StepStarted, TextDelta
from tests.helpers.demo_events import demo_run
from tests.helpers.qt_events import LayoutRequests

FOLLOWS = 12


def step_events(events: tuple[Event, ...], index: int) -> list[Event]:
    """Step ``index`` of attempt 1 as the runner delivers it (the demo's first step, renumbered)."""
    started = next(e for e in events if isinstance(e, StepStarted))
    finished = next(e for e in events if isinstance(e, StepFinished))
    step = finished.step.model_copy(update={"index": index, "attempt": 1})
    return [
        started.model_copy(update={"index": index, "attempt": 1}),
        TextDelta(run_id=started.run_id, index=index, text="x"),
        finished.model_copy(update={"step": step}),
    ]


@pytest.fixture
def events() -> tuple[Event, ...]:
    """The demo's events, made before the window's event loop runs (ask for it first)."""
    return demo_run("retry-feedback")[0]


def test_the_follows_of_a_streaming_run_do_not_relay_the_window_out(
    events: tuple[Event, ...], window: MainWindow, qtbot: QtBot
) -> None:
    emit = window.runner.engineEvent.emit
    window.status.running(True)  # the clock ticks, as while a run streams
    emit(events[0])  # RunStarted
    index = 0

    def follow() -> None:
        nonlocal index
        index += 1
        for event in step_events(events, index):
            emit(event)
        qtbot.wait(FOLLOW_MS * 2)  # a follow: summary, title, header, tokens, clock redrawn

    for _ in range(3):  # the first steps lay out what a run shows (scroll bar, header)
        follow()
    requests = LayoutRequests(window)
    texts = []
    for _ in range(FOLLOWS):
        follow()
        texts.append((window.timeline.summary.text(), window.status.elapsed.text()))
    window.status.running(False)

    assert len(set(texts)) == FOLLOWS  # every follow showed new words
    assert requests.count <= 1
    assert window.timeline.summary.text().startswith(f"{index} steps")
    assert window.detail.title.text().startswith(f"<b>Step {index}</b>")
    assert window.timeline.outcome.ended.text() == f"Running: step {index} of attempt 1."
