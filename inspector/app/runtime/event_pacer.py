"""Hands the engine's events to the window in slices, so a fast run never freezes it.

The engine runs on the window's own event loop and emits events as fast as it makes them (a
scripted turn: ~15,000 a second). Handled as they come, a burst of them is one long stretch of
UI work before the next repaint. ``EventPacer.later(slot, *args)`` runs the call at once
while this event-loop turn's slice (``SLICE_S`` of work) has time left, else queues it; each
later turn runs queued calls, in order, for one slice, after Qt has painted and handled input.
Nothing is dropped or reordered: a call made after the run's events (the runner's
``finished``) runs after them. ``slice_s=math.inf`` delivers everything at once (tests).

``alone(slot)`` runs a view's heavy update in an event-loop turn of its own, with no events in
it: following a streaming run repaints the whole timeline, and that repaint plus a slice of
events in the same turn was one stall of both.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer

SLICE_S = 0.010  # work per event-loop turn at least; one call may run past it (not cut)
SLICE_MAX_S = 0.020  # at most, when the turn's other work (a repaint) takes longer
YIELD_AFTER_S = SLICE_S  # other work this long since the last slice: the loop turns once first
# and again while the turn let go held as much other work itself (a paint posted in it: Qt lays
# a new run out in one pass and paints it in the next), at most this many turns in a row
YIELDS_MAX = 3


class EventPacer(QObject):
    def __init__(
        self,
        parent: QObject | None = None,
        slice_s: float = SLICE_S,
        slice_max_s: float = SLICE_MAX_S,
        clock: Callable[[], float] = time.perf_counter,
        yield_after_s: float = YIELD_AFTER_S,
        yields_max: int = YIELDS_MAX,
    ) -> None:
        super().__init__(parent)
        self._queue: deque[tuple[Callable[..., Any], tuple[Any, ...]]] = deque()
        self.slice_s = slice_s
        self.slice_max_s = max(slice_s, slice_max_s)
        self.yield_after_s = yield_after_s
        self.yields_max = yields_max
        self._yields = 0  # loop turns let go in a row before this slice
        self._yielded_at = 0.0  # when the last of them was let go
        self._left_at = 0.0  # when the last slice from the queue ended
        self._clock = clock
        self._slice_end = 0.0  # when the slice running now is spent
        self._spent = False  # this loop turn's slice is used up: calls wait for the next turn
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)  # the next event-loop turn, after pending paints
        self._timer.timeout.connect(self.run_slice)
        self._alone: list[Callable[[], Any]] = []  # for the next turn, without events
        self.slices = 0  # slices run from the queue so far (tests count them)
        self.turns_alone = 0  # turns given to ``alone`` calls (tests count them)
        self.turns_yielded = 0  # turns let go after other work, before a slice (tests)

    @property
    def pending(self) -> int:
        """Calls queued and not run yet."""
        return len(self._queue)

    def later(self, slot: Callable[..., Any], *args: Any) -> None:
        """Runs ``slot(*args)`` now while this turn's slice has time left and nothing waits
        before it; else queues it behind every call queued before it."""
        if self._queue or self._spent:
            self._queue.append((slot, args))
            self._wake()
            return
        now = self._clock()
        if now >= self._slice_end:
            self._slice_end = now + self.slice_s
        try:
            slot(*args)
        finally:
            if self._clock() >= self._slice_end:
                self._spent = True
                self._wake()

    def alone(self, slot: Callable[[], Any]) -> None:
        """Runs ``slot()`` at the next event-loop turn instead of a slice of events (once
        however often asked meanwhile); the calls that come before then wait for the turn
        after it."""
        if slot not in self._alone:
            self._alone.append(slot)
        self._spent = True
        self._wake()

    def end_slice(self) -> None:
        """Ends this loop turn's slice: the calls made from now on wait for a later turn (a
        run just shown is laid out and painted before its next events)."""
        self._spent = True
        self._left_at = self._clock()  # what follows (the repaint) is other work
        self._wake()

    def run_slice(self) -> int:
        """Runs queued calls for one slice; returns how many ran. A slice lasts as long as the
        loop's other work since the last one (a repaint of the timeline), within
        ``slice_s..slice_max_s``: a slow repaint each turn must not leave the events a
        sliver of the time. After other work of ``yield_after_s`` or more (a repaint ran in
        this loop turn: Qt paints and fires zero timers in the same turn), the loop turns
        once more before the slice: input and timers are handled between the repaint and the
        events, the two are never one stall; and again while the turn let go held that much
        other work itself (``yields_max`` turns in a row at most). A turn with ``alone``
        calls runs them and no event."""
        if self._alone:
            return self._run_alone()
        queue, clock = self._queue, self._clock
        now = clock()
        other = now - self._left_at if self._left_at else 0.0
        since = now - self._yielded_at if self._yields else other  # in the turn let go
        if since >= self.yield_after_s and self._yields < self.yields_max:
            self._yields += 1
            self._yielded_at = now
            self._spent = True  # the calls made meanwhile wait for the slice
            self.turns_yielded += 1
            self._wake()
            return 0
        self._yields, self._spent = 0, False
        self._slice_end = now + min(max(self.slice_s, other), self.slice_max_s)
        ran = 0
        try:
            while queue:
                slot, args = queue.popleft()
                ran += 1
                slot(*args)
                if self._spent or clock() >= self._slice_end:  # spent, or ended by the slot
                    self._spent = True
                    break
        finally:  # a slot that raised does not stop the calls queued behind it
            self.slices += 1
            self._left_at = clock()
            if queue or self._spent:
                self._wake()
        return ran

    def _run_alone(self) -> int:
        calls, self._alone = self._alone, []
        self._spent = True  # the events wait for the next turn
        try:
            for slot in calls:
                slot()
        finally:
            self.turns_alone += 1
            self._left_at = self._clock()  # what follows (its repaint) is other work
            self._yields = 0  # the loop turns once more before the next slice
            self._wake()
        return 0

    def flush(self) -> None:
        """Runs every queued call now (tests, closing)."""
        self._timer.stop()
        self._spent = False
        while self._queue:
            slot, args = self._queue.popleft()
            slot(*args)
        calls, self._alone = self._alone, []
        for call in calls:
            call()

    def _wake(self) -> None:
        if not self._timer.isActive():
            self._timer.start()
