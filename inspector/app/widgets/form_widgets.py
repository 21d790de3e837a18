"""Small building blocks of the editing forms (scenario editor, validators table): an error line
under a field and a multi-line text box of a set height."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QPlainTextEdit, QWidget

ERROR_STYLE = "color: #d1242f;"


def error_label(parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setStyleSheet(ERROR_STYLE)
    label.hide()
    return label


def text_box(parent: QWidget, lines: int) -> QPlainTextEdit:
    box = QPlainTextEdit(parent)
    box.setTabChangesFocus(True)
    box.setFixedHeight(box.fontMetrics().lineSpacing() * lines + 12)
    return box
