"""View menu items bring docks forward (never hide them), Alt+n per dock, and File › Edit a copy
of this demo opens an editable copy."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from inspector.app.library.library_panel import LibraryPanel
from inspector.app.shell.dock_actions import DOCK_ORDER
from inspector.app.shell.main_window import MainWindow
from inspector.resources import demo_path
from inspector.store import RunSummary


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
    qtbot.keyClick(window, Qt.Key.Key_5, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: _in_front(window, "scenarioDock"))


def test_ctrl_shift_a_brings_the_attempts_tab_forward_beside_the_step_dock(
    window: MainWindow, qtbot: QtBot
) -> None:
    assert window.actions_by_id["tab:attempts"] in window.view_menu.actions()
    window.activateWindow()
    modifiers = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier
    qtbot.keyClick(window, Qt.Key.Key_A, modifiers)
    qtbot.waitUntil(lambda: window.centre_tabs.currentWidget() is window.attempts)
    assert _in_front(window, "stepDock")  # kept, unlike Compare: it shows a clicked attempt's step
    window.centre_tabs.show_compare()
    qtbot.waitUntil(lambda: not window.detail_dock.isVisible())
    window.centre_tabs.show_attempts()
    qtbot.waitUntil(lambda: _in_front(window, "stepDock"))


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


def _summary(run_id: str, started_at: str) -> RunSummary:
    return RunSummary(
        run_id=run_id,
        scenario="sms",
        status="succeeded",
        termination="stop",
        started_at=started_at,
        duration_ms=1.0,
        steps=1,
        input_tokens=1,
        output_tokens=1,
        replay_of=None,
        provider="scripted",
        model="demo",
    )


def test_down_in_the_runs_filter_enters_the_list(qtbot: QtBot) -> None:
    panel = LibraryPanel(["retry-feedback"])
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.set_runs([_summary("b2", "2026-01-02T00:00:00"), _summary("a1", "2026-01-01T00:00:00")])
    panel.filter_box.setFocus()
    qtbot.waitUntil(panel.filter_box.hasFocus)
    with qtbot.waitSignal(panel.runChosen) as chosen:
        qtbot.keyClick(panel.filter_box, Qt.Key.Key_Down)
    assert chosen.args == ["b2"]  # the newest, the first row
    assert panel.run_list.hasFocus()


def test_a_centre_tab_brought_forward_keeps_the_focus_out_of_the_scenario_list(
    window: MainWindow, qtbot: QtBot
) -> None:
    # The page a tab hides hands its focus on down the window's focus chain; it reached the
    # library's scenario list, which then chose its first scenario (loaded into the policy,
    # the scenario editor and the validators: 40-100 ms of the UI thread, a changed window).
    window.activateWindow()
    window.timeline.table.setFocus()
    qtbot.waitUntil(lambda: window.timeline.table.hasFocus())
    window.centre_tabs.show_attempts()
    assert window.library.current_scenario() is None
    assert not window.library.scenario_list.hasFocus()
    window.attempts.setFocus()
    window.centre_tabs.show_timeline()  # the focus goes on into the page brought forward
    assert window.library.current_scenario() is None
    assert window.timeline.table.hasFocus()
