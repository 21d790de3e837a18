"""``Throttle``: a slot run at most once per interval however often it is asked for (the views
that follow a streaming run redraw this way: the outcome header, the Attempts tab, the Step
dock)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer


class Throttle(QTimer):
    """A single-shot timer running ``slot`` ``ms`` after the first ``poke`` since it last ran:
    the pokes in between are folded into that one run. ``stop()`` drops a pending run."""

    def __init__(self, parent: QObject, ms: int, slot: Callable[[], object]) -> None:
        super().__init__(parent)
        self.setSingleShot(True)
        self.setInterval(ms)
        self.timeout.connect(slot)

    def poke(self) -> None:
        if not self.isActive():
            self.start()
