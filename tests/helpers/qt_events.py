"""Counting Qt events a widget receives (tests count work, never time it)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject


class LayoutRequests(QObject):
    """How many ``LayoutRequest`` events reach ``watched``: each is a relayout of it."""

    def __init__(self, watched: QObject) -> None:
        super().__init__()
        self.count = 0
        watched.installEventFilter(self)

    def eventFilter(self, _watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:
            self.count += 1
        return False
