"""``RunGraveyard``: a run the views no longer show is freed a slice at a time.

A run is freed by reference counting when the last view lets go of it, in one C call that holds
the GIL throughout: a stored run of 10,000 attempts took 60–110 ms to free, a stall inside the
``_show`` of the next run opened. ``RunFocus`` hands the run it stops showing to ``bury``, which
keeps it; at each later event-loop turn, once the graveyard holds the only reference, it drops
the run's steps (its ``LiveStep``s, their final ``Step``s, the record's steps and scenario
script when nothing else holds those) from the end, for ``SLICE_S`` at most per turn, and
then the run. A light run (``core/lazy_steps``: its steps built when read, its stored bodies
kept) is handed whole to a worker thread that releases it a slice at a time
(``workflows.runs.release_run``): a light run dropped before its full read arrived was freed
at once on the UI thread (its bodies and every step built: ~25 ms for a blind retry of 10,000
attempts whose steps were all built). A run something else still holds (the run in flight,
a playback) is let go untouched after ``PATIENCE`` turns: its last holder frees it. Only lists
nobody else can reach are shortened, so nothing anyone sees changes.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from typing import Any

from PySide6.QtCore import QObject, QTimer

from inspector.app.runtime.releaser import releaser
from inspector.core.lazy_steps import light_steps
from inspector.core.live import LiveRun
from inspector.workflows.runs import release_run

SLICE_S = 0.004  # freeing per event-loop turn at most
CHUNK = 100  # items dropped between two looks at the clock
PATIENCE = 200  # turns a run may still be held elsewhere before it is let go untouched
NEXT_TURN_MS = 1  # a 0 ms timer would run before the paint it must not join
_ALONE = 3  # sys.getrefcount of an object only its holder refers to (holder, a local, the call)


class RunGraveyard(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._runs: deque[tuple[LiveRun, int]] = deque()  # (run, turns it was still held)
        self._lists: list[list[Any]] = []  # the run being freed: its lists, drained in order
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(NEXT_TURN_MS)
        self._timer.timeout.connect(self._turn)
        self.turns = 0  # turns spent freeing (tests count them)

    @property
    def pending(self) -> int:
        """Runs kept and not freed yet."""
        return len(self._runs)

    def bury(self, run: LiveRun | None) -> None:
        """Keeps ``run`` (the views stop showing it) and frees it over later turns; a run kept
        already (a holder that outlasted the patience hands it back) waits anew."""
        if run is not None and run.steps:
            kept = [n for n, (r, _) in enumerate(self._runs) if r is run]
            if kept:
                self._runs[kept[0]] = (run, 0)
            else:
                self._runs.append((run, 0))
            self._timer.start()

    def _turn(self) -> None:
        end = time.perf_counter() + SLICE_S
        while self._runs and self._free_some() and time.perf_counter() < end:
            pass
        self.turns += 1
        if self._runs:
            self._timer.start()

    def _free_some(self) -> bool:
        """Drops a chunk of the first run (or lets go of it, still held elsewhere); False: it
        is still held, and waits for a later turn."""
        run, waited = self._runs[0]
        if not self._lists:
            if sys.getrefcount(run) > _ALONE:  # held by more than the deque's tuple
                self._runs.popleft()
                if waited < PATIENCE:  # a view may let go of it on a later turn
                    self._runs.append((run, waited + 1))
                    return False
                return True  # still held: its last holder frees it
            if light_steps(run) is not None:  # the worker's reference is its last one
                self._runs.popleft()
                releaser().submit(release_run, run)
                return True
            self._lists = _lists_of(run)
        if self._lists:
            items = self._lists[-1]
            del items[-CHUNK:]
            if not items:
                self._lists.pop()
        if not self._lists:
            self._runs.popleft()  # what is left of it is small
        return True


def _lists_of(run: LiveRun) -> list[list[Any]]:
    """The lists of ``run`` (held by the graveyard alone) that nothing else holds, drained
    last first: the record's scenario script, the record's steps, then the run's own."""
    lists: list[list[Any]] = []
    steps, finals = run.steps, run.finals
    # A light run's steps (core/lazy_steps: read-only sequences, not lists) are left whole.
    if type(steps) is list and sys.getrefcount(steps) <= _ALONE:
        lists.append(steps)
    if type(finals) is list and sys.getrefcount(finals) <= _ALONE:
        lists.append(finals)
    record = run.record
    if record is not None and sys.getrefcount(record) <= _ALONE:
        if type(record.steps) is list:
            lists.append(record.steps)
        source = record.scenario_source
        script = source.get("script") if isinstance(source, dict) else None
        if (
            isinstance(script, list)
            and sys.getrefcount(source) <= _ALONE
            and sys.getrefcount(script) <= _ALONE
        ):
            lists.append(script)
    return lists
