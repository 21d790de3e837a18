"""The conversation before the user's message (``prompt.messages``): rows of role + content.

A message's other keys (``tool_calls``, ``tool_call_id``, ``name``) are kept as read: the row
edits only its role and content.
"""

from __future__ import annotations

from typing import Any, get_args

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from inspector.app.widgets.form_widgets import text_box
from inspector.core.messages import Role

ROLES = get_args(Role)


class _MessageRow(QWidget):
    def __init__(self, message: dict[str, Any], parent: QWidget) -> None:
        super().__init__(parent)
        self.message = dict(message)
        self.role = QComboBox(self)
        self.role.addItems(list(ROLES))
        self.role.setCurrentText(str(message.get("role", "user")))
        self.content: QPlainTextEdit = text_box(self, 2)
        self.content.setPlainText(str(message.get("content") or ""))
        self.remove_button = QPushButton("Remove", self)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.role)
        layout.addWidget(self.content, 1)
        layout.addWidget(self.remove_button)

    def value(self) -> dict[str, Any]:
        message = dict(self.message, role=self.role.currentText())
        text = self.content.toPlainText()
        if text or self.message.get("content") is not None:
            message["content"] = text
        return message


class MessagesEditor(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._rows: list[_MessageRow] = []
        self._box = QVBoxLayout()
        self._box.setContentsMargins(0, 0, 0, 0)
        self.add_button = QPushButton("Add message", self)
        self.add_button.setToolTip("A message sent before the user message (few-shot, history)")
        self.add_button.clicked.connect(lambda: self.add_message({"role": "user", "content": ""}))
        buttons = QHBoxLayout()
        buttons.addWidget(self.add_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._box)
        layout.addLayout(buttons)

    def set_messages(self, messages: list[dict[str, Any]]) -> None:
        for row in self._rows:
            self._drop(row)
        self._rows = []
        for message in messages:
            self._add(message)

    def messages(self) -> list[dict[str, Any]]:
        return [row.value() for row in self._rows]

    def rows(self) -> int:
        return len(self._rows)

    def add_message(self, message: dict[str, Any]) -> None:
        self._add(message)
        self.changed.emit()

    def set_row(self, index: int, role: str, content: str) -> None:
        """Fills row ``index`` as the user would (tests, and the playback of edits)."""
        row = self._rows[index]
        row.role.setCurrentText(role)
        row.content.setPlainText(content)

    def _add(self, message: dict[str, Any]) -> None:
        row = _MessageRow(message, self)
        row.role.currentTextChanged.connect(self.changed)
        row.content.textChanged.connect(self.changed)
        row.remove_button.clicked.connect(lambda: self._remove(row))
        self._rows.append(row)
        self._box.addWidget(row)

    def _remove(self, row: _MessageRow) -> None:
        self._rows.remove(row)
        self._drop(row)
        self.changed.emit()

    def _drop(self, row: _MessageRow) -> None:
        self._box.removeWidget(row)
        row.hide()
        row.deleteLater()
