"""``StoreWatch``: runs written to the window's store by anyone else — the proxy hosted in the
window (its writer thread has its own connection), ``agent-inspector proxy`` or ``run`` in a
terminal — noticed while they record.

A timer asks SQLite's ``PRAGMA data_version`` (microseconds, no table read), which changes only
when another connection commits; only then does the window read the newest runs. Nothing is
read while the store is quiet, and nothing blocks: a check is one pragma on the UI thread."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer, Signal

from inspector.core.errors import InspectorError

__all__ = ["INTERVAL_MS", "StoreWatch"]

INTERVAL_MS = 400  # how soon a run from elsewhere shows: fast enough to watch a proxied turn


class StoreWatch(QObject):
    """Emits ``changed`` after another connection committed to the store."""

    changed = Signal()

    def __init__(
        self,
        version: Callable[[], int],
        parent: QObject | None = None,
        interval_ms: int = INTERVAL_MS,
    ) -> None:
        super().__init__(parent)
        self._version = version
        self._seen: int | None = None
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self.check)

    def start(self) -> None:
        self._seen = self._read()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()

    def check(self) -> bool:
        """True (and ``changed``) when the store changed since the last check."""
        version = self._read()
        if version is None or version == self._seen:
            return False
        self._seen = version
        self.changed.emit()
        return True

    def _read(self) -> int | None:
        try:
            return self._version()
        except InspectorError:  # the store briefly locked: ask again on the next tick
            return None
