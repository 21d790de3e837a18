"""What the window shows of the local model server (``LocalModelControl`` runs it): progress in
the status bar, the outcome as a message, the running server's URL in a permanent label, and
its menu actions disabled while a start, stop or status check is under way."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel, QWidget

from inspector.app.local_model.local_model_control import LocalModelControl
from inspector.app.runtime.notifier import Notifier


class LocalModelStatus(QObject):
    urlChanged = Signal(object)  # the running server's base URL, or None once it is not

    def __init__(
        self,
        control: LocalModelControl,
        notify: Notifier,
        actions: Sequence[QAction],
        parent: QWidget,
    ) -> None:
        super().__init__(parent)
        self._notify, self._actions = notify, list(actions)
        self.label = QLabel(parent)
        self.label.setObjectName("localModelUrl")
        self.label.hide()
        control.busyChanged.connect(self._busy)
        control.progress.connect(self._progress)
        control.running.connect(self._running)
        control.notRunning.connect(self._not_running)
        control.failed.connect(self._failed)

    def _busy(self, busy: bool) -> None:
        for action in self._actions:
            action.setEnabled(not busy)

    def _progress(self, line: str) -> None:
        self._notify.show_status(f"Local model: {line}")

    def _running(self, url: str) -> None:
        self._notify.clear_status()
        self._set_url(url)
        self._notify.show_message(
            "info",
            f"Local model running at {url}. Choose the “Local llama.cpp” provider preset in the "
            "Policy tab, or run demo:local-model.",
        )

    def _not_running(self, message: str) -> None:
        self._notify.clear_status()
        self._set_url(None)
        self._notify.show_message("info", message)

    def _failed(self, message: str) -> None:
        self._notify.clear_status()
        self._notify.show_message("error", message)

    def _set_url(self, url: str | None) -> None:
        self.label.setText(f"Local model: {url}" if url else "")
        self.label.setVisible(url is not None)
        self.urlChanged.emit(url)
