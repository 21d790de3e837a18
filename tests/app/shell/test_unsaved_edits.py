"""Closing the window with unsaved edits asks first: Cancel keeps the window and every edit,
Discard closes; the question lists the python file, the validators table and the scenario."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from inspector.app.shell.main_window import MainWindow
from tests.helpers.scenarios import write_scenario

SCENARIO = """
    name = "sms"
    [prompt]
    system = "You write SMS messages."
    user = "Tell Sam."
    [[validators]]
    kind = "python"
    function = "checks.py:short"
    [[validators]]
    kind = "max_length"
    max = 160
    [[script]]
    text = "Hi Sam."
"""
CHECKS = "def short(output, ctx):\n    return len(output) < 60\n"


def type_text(window: MainWindow, text: str) -> None:
    """As a user's typing does: the document is modified (``setPlainText`` resets that)."""
    code = window.validators.python_editor.editor
    code.selectAll()
    code.insertPlainText(text)


def open_scenario(window: MainWindow, qtbot: QtBot, tmp_path: Path) -> Path:
    (tmp_path / "checks.py").write_text(CHECKS, encoding="utf-8")
    path = write_scenario(tmp_path, SCENARIO, "sms.toml")
    assert window.library.select_scenario(str(path))
    qtbot.waitUntil(lambda: window.validators.python_editor.path() == tmp_path / "checks.py")
    return path


def test_nothing_edited_closes_without_a_question(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    open_scenario(window, qtbot, tmp_path)
    asked: list[list[str]] = []
    window.ask_discard = lambda _parent, unsaved: bool(asked.append(unsaved)) or True
    assert window.close()
    assert asked == []


def test_unsaved_edits_are_listed_and_cancel_keeps_them(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    open_scenario(window, qtbot, tmp_path)
    editor = window.validators.python_editor
    type_text(window, CHECKS.replace("60", "80"))
    window.scenario_editor.system.setPlainText("You write short SMS messages.")
    asked: list[list[str]] = []

    def cancel(_parent: object, unsaved: list[str]) -> bool:
        asked.append(unsaved)
        return False

    window.ask_discard = cancel
    assert not window.close()  # refused: the window stays, with its edits
    assert window.isVisible()
    assert asked == [["checks.py", f"{tmp_path / 'sms.toml'} (scenario)"]]
    assert "80" in editor.text() and editor.is_modified()
    assert (tmp_path / "checks.py").read_text(encoding="utf-8") == CHECKS

    # Still counted while another scenario is shown (its edits are kept for when it is back).
    assert window.library.select_scenario("demo:retry-feedback")
    window.ask_discard = lambda _parent, unsaved: bool(asked.append(unsaved)) or True
    assert window.close()
    assert asked[-1] == ["checks.py", f"{tmp_path / 'sms.toml'} (scenario)"]


def test_saved_edits_close_without_a_question(
    window: MainWindow, qtbot: QtBot, tmp_path: Path
) -> None:
    open_scenario(window, qtbot, tmp_path)
    editor = window.validators.python_editor
    type_text(window, CHECKS.replace("60", "80"))
    assert editor.is_modified()
    assert editor.save()
    asked: list[list[str]] = []
    window.ask_discard = lambda _parent, unsaved: bool(asked.append(unsaved)) or True
    assert window.close()
    assert asked == []
