"""How a feature tells the user something without knowing the window: a message in the bar above
the timeline (one line, never a traceback) or a transient line in the status bar."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtWidgets import QStatusBar

from inspector.app.widgets.message_bar import Level, MessageBar

__all__ = ["Level", "Notices", "Notifier"]


class Notifier(Protocol):
    def show_message(self, level: Level, text: str) -> None: ...

    def clear(self) -> None: ...

    def show_status(self, text: str, timeout_ms: int = 0) -> None: ...

    def clear_status(self) -> None: ...


class Notices:
    """The window's ``Notifier``: its message bar and its status bar."""

    def __init__(self, bar: MessageBar, status: QStatusBar) -> None:
        self._bar, self._status = bar, status

    def show_message(self, level: Level, text: str) -> None:
        self._bar.show_message(level, text)

    def clear(self) -> None:
        self._bar.clear()

    def show_status(self, text: str, timeout_ms: int = 0) -> None:
        self._status.showMessage(text, timeout_ms)

    def clear_status(self) -> None:
        self._status.clearMessage()
