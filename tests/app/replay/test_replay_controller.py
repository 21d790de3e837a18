"""ReplayController on its own: a fake runner, a RunFocus, a policy panel and a notifier that
records what it is told — no window."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from inspector.app.policy.policy_panel import PolicyPanel
from inspector.app.replay.replay_controller import ReplayController
from inspector.app.runtime.run_focus import RunFocus
from inspector.core.live import LiveRun
from inspector.resources import resolve_scenario
from tests.helpers.demo_events import demo_run


class FakeRunner(QObject):
    busyChanged = Signal(bool)

    def __init__(self) -> None:
        super().__init__()
        self.busy = False
        self.turn: Any = None
        self.replays: list[tuple[str, list[str], bool]] = []

    def start_replay(self, run_id: str, overrides: list[str], offline: bool) -> bool:
        self.replays.append((run_id, overrides, offline))
        return True


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
def parts(
    qtbot: QtBot,
) -> Iterator[tuple[ReplayController, FakeRunner, RunFocus, PolicyPanel, Said]]:
    parent = QWidget()  # the controller's parent: kept alive for the whole test
    qtbot.addWidget(parent)
    runner, focus, policy, said = FakeRunner(), RunFocus(parent), PolicyPanel(), Said()
    qtbot.addWidget(policy)
    replay = ReplayController(runner, focus, policy, said, parent)  # type: ignore[arg-type]
    yield replay, runner, focus, policy, said
    del parent


def test_nothing_shown_is_said_and_nothing_starts(parts: Any) -> None:
    replay, runner, _focus, _policy, said = parts
    assert replay.replay() is False
    assert said.messages == [("info", "Pick a recorded run to replay first.")]
    assert runner.replays == []


def test_the_shown_run_replays_with_the_panels_values_offline(parts: Any) -> None:
    replay, runner, focus, policy, said = parts
    record = demo_run("retry-feedback")[1]
    focus.shown = LiveRun.from_record(record)
    policy.set_scenario(resolve_scenario("demo:retry-feedback"))
    replay.offline_box.setChecked(True)
    assert replay.replay() is True
    assert runner.replays == [(record.run_id, [], True)] and said.messages == []


def test_a_run_still_loading_or_a_busy_runner_refuses(parts: Any) -> None:
    replay, runner, focus, _policy, said = parts
    focus.set_loading("abc")
    assert replay.replay() is False
    assert said.messages[-1] == ("info", "Run abc is still loading: replay it once it is shown.")
    runner.busy = True
    runner.busyChanged.emit(True)
    assert not replay.replay_action.isEnabled()
    assert replay.replay() is False and "Wait for the running turn" in said.messages[-1][1]
    assert runner.replays == []


def test_compare_with_original_asks_for_the_pair(parts: Any, qtbot: QtBot) -> None:
    replay, _runner, focus, _policy, said = parts
    assert replay.compare_with_original() is False and "Show a replayed run" in said.messages[-1][1]
    record = demo_run("retry-feedback")[1].model_copy(update={"replay_of": "original1"})
    focus.shown = LiveRun.from_record(record)
    with qtbot.waitSignal(replay.compareRequested) as asked:
        assert replay.compare_with_original() is True
    assert asked.args == [["original1", record.run_id]]
