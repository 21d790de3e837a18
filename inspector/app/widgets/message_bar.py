"""A dismissible message strip above the timeline: how errors reach the user (never a
traceback, never a crash). Its tint is translucent, so it reads on light and dark palettes."""

from __future__ import annotations

from typing import Literal

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QStyle, QToolButton, QWidget

Level = Literal["error", "warning", "info"]
_TINT = {"error": "209, 36, 47", "warning": "212, 167, 44", "info": "9, 105, 218"}
_ICON = {
    "error": QStyle.StandardPixmap.SP_MessageBoxCritical,
    "warning": QStyle.StandardPixmap.SP_MessageBoxWarning,
    "info": QStyle.StandardPixmap.SP_MessageBoxInformation,
}


class MessageBar(QFrame):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("messageBar")
        self.level: Level | None = None
        self.icon = QLabel(self)
        self.text = QLabel(self)
        self.text.setObjectName("messageText")
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        close = QToolButton(self)
        close.setText("✕")
        close.setAutoRaise(True)
        close.setToolTip("Dismiss")
        close.clicked.connect(self.clear)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 4, 4)
        layout.addWidget(self.icon, 0, Qt.AlignmentFlag.AlignTop)
        layout.addWidget(self.text, 1)
        layout.addWidget(close, 0, Qt.AlignmentFlag.AlignTop)
        self.hide()

    def show_message(self, level: Level, message: str) -> None:
        self.level = level
        tint = _TINT[level]
        self.setStyleSheet(
            f"#messageBar {{ background: rgba({tint}, 0.14); "
            f"border: 1px solid rgba({tint}, 0.55); border-radius: 4px; }}"
        )
        size = self.text.fontMetrics().height()
        self.icon.setPixmap(self.style().standardIcon(_ICON[level]).pixmap(size, size))
        self.text.setText(message)
        self.show()

    def clear(self) -> None:
        self.level = None
        self.text.clear()
        self.hide()
