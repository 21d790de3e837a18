"""PlaybackController on its own: a fake runner, a RunFocus standing in for the window's views,
a store with one recorded run and a notifier that records what it is told — no window."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from inspector.app.playback.playback import PlaybackController
from inspector.app.runtime.run_focus import RunFocus
from inspector.app.runtime.runner import InspectorEventLoop
from inspector.core.live import LiveRun
from inspector.store import Store
from tests.helpers.runs import demo_record


class FakeRunner(QObject):
    busyChanged = Signal(bool)

    def __init__(self) -> None:
        super().__init__()
        self.busy = False


class Said:
    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []

    def show_message(self, level: str, text: str) -> None:
        self.messages.append((level, text))

    def clear(self) -> None:
        self.messages.clear()

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        del text, timeout_ms

    def clear_status(self) -> None:
        pass


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    """A store holding one run of demo:retry-feedback, stored without events (playback rebuilds
    them); made before the Qt loop runs (asyncio.run cannot run inside it)."""
    record = asyncio.run(demo_record("retry-feedback"))
    db = tmp_path / "runs.sqlite3"
    with Store.open(db) as store:
        store.save(record)
    return db, record.run_id


@pytest.fixture
def parts(
    recorded: tuple[Path, str], qloop: InspectorEventLoop, qtbot: QtBot
) -> Iterator[tuple[PlaybackController, FakeRunner, RunFocus, Said, str]]:
    del qloop  # the controller reads the run on the running loop's executor
    db, run_id = recorded
    parent = QWidget()  # the controller's parent: kept alive for the whole test
    qtbot.addWidget(parent)
    runner, focus, said = FakeRunner(), RunFocus(parent), Said()
    focus.showRequested.connect(focus.shown_now)  # the window's part: the views show it
    playback = PlaybackController(runner, focus, db, said, parent)  # type: ignore[arg-type]
    yield playback, runner, focus, said, run_id
    playback.playback.stop(restore=False)
    del parent


def test_a_run_plays_back_through_the_focus_until_another_run_is_shown(
    parts: tuple[PlaybackController, FakeRunner, RunFocus, Said, str], qtbot: QtBot
) -> None:
    playback, _runner, focus, said, run_id = parts
    playback.play_back(run_id)
    qtbot.waitUntil(lambda: playback.playback.active)
    assert focus.shown is playback.playback.run
    assert said.messages and "stored without its events" in said.messages[-1][1]
    assert playback.toggle_action.isEnabled() and playback.stop_action.isEnabled()
    focus.show(LiveRun())  # anything else shown ends the playback
    assert not playback.playback.active and not playback.toggle_action.isEnabled()


def test_a_busy_runner_refuses_and_stops_a_playback(
    parts: tuple[PlaybackController, FakeRunner, RunFocus, Said, str], qtbot: QtBot
) -> None:
    playback, runner, _focus, said, run_id = parts
    playback.play_back(run_id)
    qtbot.waitUntil(lambda: playback.playback.active)
    runner.busy = True
    runner.busyChanged.emit(True)
    assert not playback.playback.active and not playback.play_back_action.isEnabled()
    playback.play_back(run_id)
    assert "A run is in progress" in said.messages[-1][1]


def test_nothing_shown_says_so(
    parts: tuple[PlaybackController, FakeRunner, RunFocus, Said, str],
) -> None:
    playback, _runner, _focus, said, _run_id = parts
    playback.play_back_shown()
    assert said.messages == [("info", "Pick a recorded run to play back.")]
