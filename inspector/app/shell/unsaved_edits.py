"""Quitting never loses an edit silently: the window's editors say what no file has yet, and the
user is asked before it is discarded."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QWidget

if TYPE_CHECKING:
    from inspector.app.shell.main_window import MainWindow

__all__ = ["ask_discard", "unsaved_edits"]


def unsaved_edits(window: MainWindow) -> list[str]:
    """The python validator files, validators tables and scenarios edited and not saved (the
    one shown and the drafts kept for the others)."""
    return [
        *window.validators.python_editor.unsaved(),
        *window.validators.table.unsaved(),
        *window.scenario_editor.unsaved(),
    ]


def ask_discard(parent: QWidget, unsaved: list[str]) -> bool:
    """True when the user chooses to discard ``unsaved`` (Cancel is the default)."""
    buttons = QMessageBox.StandardButton
    answer = QMessageBox.question(
        parent,
        "Unsaved edits",
        "These edits are not saved:\n\n"
        + "\n".join(f"• {item}" for item in unsaved)
        + "\n\nQuit and discard them? (Cancel, then Ctrl+S in each editor, keeps them.)",
        buttons.Discard | buttons.Cancel,
        buttons.Cancel,
    )
    return answer == buttons.Discard
