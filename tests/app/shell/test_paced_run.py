"""A run's events reach the window through its EventPacer: in slices when they come faster
than a slice's time, in order, and the window ends on the finished run all the same."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from inspector.app.shell.main_window import MainWindow
from tests.helpers.window import run_in_window


def test_a_run_paced_one_event_per_slice_ends_like_one_delivered_at_once(
    window: MainWindow, qtbot: QtBot
) -> None:
    pacer = window.pacer
    pacer.slice_s = pacer.slice_max_s = 0.0  # every call spends its slice: one per loop turn
    record = run_in_window(window, qtbot, "demo:retry-feedback")
    qtbot.waitUntil(lambda: pacer.pending == 0, timeout=20_000)
    assert pacer.slices > 1  # the events were queued and handed over in turns
    shown = window.shown
    assert shown is not None and shown.run_id == record.run_id and shown.finished
    assert shown.resynced == []  # the end replaced no step: each came as it streamed
    assert [s.as_step() for s in shown.steps] == record.steps
    assert window.timeline.model.rowCount() >= len(record.steps)
    assert record.run_id in window.statusBar().currentMessage()


def test_the_timeline_follows_a_run_in_loop_turns_of_its_own(window: MainWindow) -> None:
    assert window.timeline.follow_turn == window.pacer.alone
