"""View menu items bring docks forward (never hide them), Alt+n per dock, and File › Edit a copy
of this demo opens an editable copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from inspector.app.shell.dock_actions import DOCK_ORDER
from inspector.app.shell.main_window import MainWindow
from inspector.resources import demo_path


def _in_front(window: MainWindow, name: str) -> bool:
    dock = window.findChild(type(window.policy_dock), name)
    assert dock is not None
    return dock.isVisible() and not dock.visibleRegion().isEmpty()


def test_a_view_item_raises_an_open_dock_and_never_hides_it(
    window: MainWindow, qtbot: QtBot
) -> None:
    policy = window.actions_by_id["dock:policyDock"]
    assert not _in_front(window, "policyDock")  # the Step tab is in front at start
    policy.trigger()
    qtbot.waitUntil(lambda: _in_front(window, "policyDock"))
    policy.trigger()  # again: still there (a toggle would have hidden it)
    qtbot.wait(0)
    assert _in_front(window, "policyDock")
    window.policy_dock.close()
    policy.trigger()
    qtbot.waitUntil(lambda: _in_front(window, "policyDock"))


def test_every_dock_has_a_shortcut(window: MainWindow, qtbot: QtBot) -> None:
    keys = {name: window.actions_by_id[f"dock:{name}"].shortcut().toString() for name in DOCK_ORDER}
    assert keys == {name: f"Alt+{n}" for n, name in enumerate(DOCK_ORDER, start=1)}
    window.activateWindow()
    qtbot.keyClick(window, Qt.Key.Key_6, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: _in_front(window, "scenarioDock"))


def test_edit_a_copy_of_a_demo_opens_the_copy(
    window: MainWindow, qtbot: QtBot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENT_INSPECTOR_SCENARIOS", str(tmp_path / "mine"))
    assert window.library.select_scenario("demo:step-cap")
    window.actions_by_id["edit_copy"].trigger()
    copy = tmp_path / "mine" / "step-cap" / "step-cap.toml"
    assert copy.read_bytes() == demo_path("step-cap").read_bytes()
    assert window.library.current_scenario() == str(copy)
    assert window.message_bar.level == "info" and str(copy) in window.message_bar.text.text()
    # On a scenario file it says what to do instead of copying.
    window.actions_by_id["edit_copy"].trigger()
    assert "Choose a built-in demo first" in window.message_bar.text.text()
    assert not (tmp_path / "mine" / "step-cap-2").exists()
