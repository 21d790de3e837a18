"""Playback of a recorded run: its events go back into the window at the recorded pace (or
"max"), pause and step both ways, and leave the store and the providers alone."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from inspector.app.detail.step_detail import RESPONSE
from inspector.app.playback.playback import Playback, load_recording
from inspector.app.shell.main_window import MainWindow, run_title
from inspector.app.shell.run_status import tokens_text
from inspector.app.timeline.timeline_view import TimelineView
from inspector.core.events import Event
from inspector.core.live import LiveRun
from inspector.core.records import RunRecord
from inspector.reports.run_text import usage_so_far
from inspector.store import Store
from tests.helpers.window import run_in_window

CTRL = Qt.KeyboardModifier.ControlModifier


def _record_demo(window: MainWindow, qtbot: QtBot) -> RunRecord:
    return run_in_window(window, qtbot, "demo:retry-feedback")


def _rows(timeline: TimelineView) -> list[tuple[Any, ...]]:
    """What the timeline shows: every cell's text and the run's steps (status, verdicts…)."""
    model = timeline.model
    return [
        tuple(model.index(r, c).data() for c in range(model.columnCount()))
        for r in range(model.rowCount())
    ]


def _steps(run: LiveRun) -> list[dict[str, Any]]:
    return [s.as_step().model_dump() for s in run.steps]


def _folded(playback: Playback, position: int) -> LiveRun:
    assert playback.recording is not None
    run = LiveRun()
    for timed in playback.recording.events[:position]:
        run.apply(timed.event)
    return run


def _play_back(window: MainWindow, qtbot: QtBot, run_id: str, speed: str = "max") -> Playback:
    playback = window.playback.playback
    window.playback.bar.speed.setCurrentText(speed)
    with qtbot.waitSignal(playback.activeChanged, timeout=10_000):
        window.play_back(run_id)
    return playback


def _play_to_end(window: MainWindow, qtbot: QtBot, run_id: str) -> Playback:
    playback = _play_back(window, qtbot, run_id)
    qtbot.waitUntil(lambda: not playback.playing, timeout=10_000)
    assert playback.position == len(playback.schedule)
    return playback


def _refuse_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """From here on, building a provider (a model call's first step) fails the test."""

    def refuse(*args: object, **kwargs: object) -> object:
        raise AssertionError("playback built a provider")

    monkeypatch.setattr("inspector.providers.factory.build_provider", refuse)


def test_playback_at_max_speed_ends_with_the_recorded_timeline(
    window: MainWindow, qtbot: QtBot, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _record_demo(window, qtbot)
    recorded_rows = _rows(window.timeline)
    assert [row[3] for row in recorded_rows]  # statuses are there to compare
    runs_before = [r.run_id for r in store.runs()]
    events_before = len(store.events(record.run_id))
    _refuse_providers(monkeypatch)

    playback = _play_to_end(window, qtbot, record.run_id)

    assert window.shown is playback.run and window.shown is not window.live
    assert _rows(window.timeline) == recorded_rows
    assert playback.run.record == record
    assert window.run_heading.text().startswith("Playback · ")
    assert window.playback.bar.isVisible()
    assert window.playback.bar.position_label.text().startswith(
        f"event {len(playback.schedule)} / {len(playback.schedule)} · "
    )
    # Nothing was recorded and the runs list is the same.
    assert [r.run_id for r in store.runs()] == runs_before
    assert len(store.events(record.run_id)) == events_before
    assert window.library.runs.rowCount() == len(runs_before)

    qtbot.keyClick(window.timeline.table, Qt.Key.Key_Escape)  # ■: back to the normal view
    assert not playback.active and not window.playback.bar.isVisible()
    assert window.run_heading.text() == run_title(LiveRun.from_record(record))
    assert _rows(window.timeline) == recorded_rows


def test_pause_mid_way_holds_the_position_and_shows_exactly_that_far(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _record_demo(window, qtbot)
    _refuse_providers(monkeypatch)
    playback = window.playback.playback
    paused_at: list[int] = []

    def pause_half_way(position: int) -> None:
        if playback.playing and position >= len(playback.schedule) // 2:
            playback.pause()
            paused_at.append(position)

    playback.positionChanged.connect(pause_half_way)
    _play_back(window, qtbot, record.run_id, speed="8×")
    qtbot.waitUntil(lambda: bool(paused_at), timeout=10_000)
    position = paused_at[0]
    assert 0 < position < len(playback.schedule)
    qtbot.wait(150)  # long enough for a few recorded gaps at 8×: nothing may move
    assert playback.position == position and not playback.playing
    assert window.playback.bar.slider.value() == position
    assert window.playback.bar.position_label.text().startswith(
        f"event {position} / {len(playback.schedule)} · "
    )
    assert _steps(window.shown or LiveRun()) == _steps(_folded(playback, position))
    assert window.playback.toggle_action.text() == "Play"

    playback.positionChanged.disconnect(pause_half_way)
    qtbot.keyClick(window.timeline.table, Qt.Key.Key_Space)  # resumes, to the end
    qtbot.waitUntil(lambda: playback.position == len(playback.schedule), timeout=10_000)
    assert playback.run.record == record


def test_stepping_forward_and_back_lands_on_meaningful_events(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _record_demo(window, qtbot)
    _refuse_providers(monkeypatch)
    playback = _play_to_end(window, qtbot, record.run_id)
    playback.seek(0)
    assert playback.position == 0 and window.timeline.model.rowCount() == 0
    assert playback.recording is not None
    events = [t.event for t in playback.recording.events]

    landed: list[str] = []
    while playback.position < len(events):
        before = playback.position
        qtbot.keyClick(window.timeline.table, Qt.Key.Key_Right)
        assert playback.position > before
        applied = [e.kind for e in events[before : playback.position]]
        if len(applied) > 1:  # only one step's stream is skipped over in one go
            assert set(applied) <= {"text_delta", "reasoning_delta", "tool_call_delta"}
            assert len({e.index for e in events[before : playback.position]}) == 1  # type: ignore[union-attr]
        landed.append(applied[-1])
    for kind in ("step_started", "verdicts", "attempt_cleared", "feedback_injected"):
        assert kind in landed
    assert landed[-1] == "run_finished" and playback.run.record == record

    # Back from the end, every view equals the same position folded from scratch.
    scratch = TimelineView()
    qtbot.addWidget(scratch)
    while playback.position > 0:
        qtbot.keyClick(window.timeline.table, Qt.Key.Key_Left)
        folded = _folded(playback, playback.position)
        scratch.show_run(folded)
        assert _rows(window.timeline) == _rows(scratch)
        assert _steps(playback.run) == _steps(folded)
        assert window.run_heading.text() == playback.heading()
        assert window.status.tokens.text() == tokens_text(usage_so_far(folded))  # not the end's
    assert window.timeline.model.rowCount() == 0


def test_streamed_text_reaches_the_views_delta_by_delta(
    window: MainWindow, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _record_demo(window, qtbot)
    _refuse_providers(monkeypatch)
    seen: dict[str, list[tuple[int, str]]] = {"detail": [], "attempts": []}

    def spy(name: str, view: Any) -> None:
        original = view.on_event

        def on_event(event: Event) -> None:
            if event.kind == "text_delta":
                step = window.shown.step(event.index) if window.shown else None
                assert step is not None
                seen[name].append((event.index, "".join(step.text)))
            original(event)

        monkeypatch.setattr(view, "on_event", on_event)

    spy("detail", window.detail)
    spy("attempts", window.attempts)
    window.detail.tabs.setCurrentIndex(RESPONSE)  # the streamed text appends there
    _play_to_end(window, qtbot, record.run_id)

    assert seen["detail"] == seen["attempts"]
    final = {s.index: s.response.text for s in record.steps if s.response}
    for index, text in final.items():
        shown = [partial for i, partial in seen["detail"] if i == index]
        if not text:
            continue
        assert len(shown) > 1, f"step {index} arrived at once"
        assert all(text.startswith(p) for p in shown) and shown[-1] == text
        assert len(set(shown)) == len(shown)  # it grew at every delta
    last = final[record.steps[-1].index]
    qtbot.waitUntil(lambda: window.detail.response.text.toPlainText() == last)


def test_starting_a_run_stops_the_playback(window: MainWindow, qtbot: QtBot) -> None:
    record = _record_demo(window, qtbot)
    playback = _play_back(window, qtbot, record.run_id, speed="0.25×")
    assert playback.playing and window.playback.bar.isVisible()
    assert not window.stop_action.isEnabled()  # Esc is playback's now

    with qtbot.waitSignal(window.runner.finished, timeout=20_000):
        qtbot.keyClick(window, Qt.Key.Key_R, CTRL)
        assert not playback.active and not playback.playing
        assert not window.playback.bar.isVisible()
        assert not window.playback.play_back_action.isEnabled()
    qtbot.waitUntil(lambda: not window.runner.busy)
    assert window.live is not None and window.live.run_id != record.run_id
    assert window.shown is window.live
    assert window.playback.play_back_action.isEnabled()


def test_keys_work_only_while_playing_back_and_leave_text_fields_alone(
    window: MainWindow, qtbot: QtBot
) -> None:
    record = _record_demo(window, qtbot)
    control = window.playback
    steps_actions = (control.toggle_action, control.back_action, control.forward_action)
    assert not any(a.isEnabled() for a in (*steps_actions, control.stop_action))

    qtbot.keyClick(window, Qt.Key.Key_P, CTRL)  # plays back the run shown
    qtbot.waitUntil(lambda: control.playback.active, timeout=10_000)
    assert control.playback.recording is not None
    assert control.playback.recording.run_id == record.run_id
    assert all(a.isEnabled() for a in steps_actions)

    control.playback.pause()
    field = window.library.filter_box
    field.setFocus()
    qtbot.keyClicks(field, "a b")
    qtbot.keyClick(field, Qt.Key.Key_Left)
    assert field.text() == "a b" and field.cursorPosition() == 2
    assert not control.playback.playing
    field.clear()


def test_a_run_stored_without_events_plays_its_rebuilt_events(
    window: MainWindow, qtbot: QtBot, store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = _record_demo(window, qtbot)
    _refuse_providers(monkeypatch)
    imported = record.model_copy(update={"run_id": "imported-run"})
    store.save(imported)
    assert store.events("imported-run") == []
    recording = load_recording(store.path, "imported-run")
    assert recording.synthesized and recording.events[-1].event.kind == "run_finished"

    playback = _play_to_end(window, qtbot, "imported-run")
    assert "rebuilt from its record" in window.message_bar.text.text()
    assert playback.run.record == imported
    assert _steps(playback.run) == _steps(LiveRun.from_record(imported))

    # Another run shown (here from code, as compare or a replay would) ends the playback.
    window.show_stored_run(record.run_id)
    qtbot.waitUntil(lambda: window.shown is not None and window.shown.run_id == record.run_id)
    assert not playback.active and not window.playback.bar.isVisible()


def test_a_missing_run_is_a_one_line_error(window: MainWindow, qtbot: QtBot) -> None:
    window.play_back("no-such-run")
    qtbot.waitUntil(lambda: window.message_bar.level == "error", timeout=10_000)
    assert "no-such-run" in window.message_bar.text.text()
    assert not window.playback.playback.active

    window.shown = None
    window.playback.play_back_shown()
    assert window.message_bar.level == "info"
