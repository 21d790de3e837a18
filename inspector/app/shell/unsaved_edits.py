"""Quitting never loses an edit silently: the window's editors say what no file has yet, and the
user is asked before it is discarded."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from PySide6.QtWidgets import QMessageBox, QWidget

__all__ = ["ask_discard", "unsaved_edits"]


class Editor(Protocol):
    def unsaved(self) -> list[str]: ...


def unsaved_edits(editors: Iterable[Editor]) -> list[str]:
    """What ``editors`` hold that no file has yet (each: the file shown and the drafts kept for
    the others): the window passes its python validator editor, validators table and scenario
    editor."""
    return [item for editor in editors for item in editor.unsaved()]


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
