"""Python's garbage collection, on the GUI thread only.

Widgets and their signal connections form reference cycles, so Qt objects are often freed by the
cyclic collector — which runs in whatever thread happens to allocate when a threshold is passed.
The window runs scenario loading, store reads and re-validation on worker threads; a collection
there frees Qt objects off their thread ("Timers cannot be stopped from another thread", and at
worst a crash). So automatic collection is switched off while the window lives and a timer on the
GUI thread collects with the thresholds the collector itself would use (pyqtgraph's approach).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

from PySide6.QtCore import QObject, QTimer

__all__ = ["GuiThreadCollector", "collection_held", "settle_loaded"]


_held = 0  # reads in flight on worker threads (collection_held)


def settle_loaded() -> None:
    """Takes the objects alive now out of the collector's scans (``gc.freeze``, O(1)), once a
    run is shown: a 100,000-step run is millions of tracked objects, and every collection that
    reached them walked them all (seconds with the window frozen). Not collected first: that
    would walk them once more. A run dropped later is still freed by reference counting: runs
    and their records hold no reference cycles (tests/app/test_gui_collector.py)."""
    gc.freeze()


@contextmanager
def collection_held() -> Iterator[None]:
    """No collection while a worker thread builds a run for the views: with automatic
    collection off, everything it allocates waits in the youngest generation, and a check
    meanwhile would walk it on the GUI thread. ``settle_loaded`` freezes it once it lands."""
    global _held
    _held += 1
    try:
        yield
    finally:
        _held -= 1


def due_generation(counts: tuple[int, int, int], thresholds: tuple[int, ...]) -> int | None:
    """The oldest generation whose count passed its threshold (None: nothing is due)."""
    due = None
    for generation in range(3):
        if thresholds[generation] and counts[generation] > thresholds[generation]:
            due = generation
    return due


class GuiThreadCollector(QObject):
    """``gc.disable()`` and a collection check every ``interval_ms`` on this (the GUI) thread;
    ``stop()`` gives the collector back to Python."""

    def __init__(self, interval_ms: int = 500, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._was_enabled = gc.isenabled()
        gc.disable()
        self._timer = QTimer(self)
        self._timer.timeout.connect(self.check)
        self._timer.start(interval_ms)

    def check(self) -> None:
        if _held:
            return
        generation = due_generation(gc.get_count(), gc.get_threshold())
        if generation is not None:
            gc.collect(generation)

    def stop(self) -> None:
        self._timer.stop()
        if self._was_enabled:
            gc.enable()
