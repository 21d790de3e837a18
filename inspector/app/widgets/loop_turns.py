"""``in_own_turn``: the views' heavy renders one per event-loop turn.

Qt runs every timer that is due at the start of a pass back to back, so two views' renders
scheduled apart (the Attempts tab's and the Step detail's, after a long run's full read is put
in place) can still make one pause of both. A piece run through ``in_own_turn`` that finds
another one ran in this pass or the one before (the event dispatcher's ``awake`` counts the
passes) runs at a later turn instead: the first pass after one that no piece took, so that
every timer due meanwhile (and input, paint) runs between two pieces; or the next pass if the
dispatcher reports no passes.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QAbstractEventDispatcher, QObject, QTimer

NEXT_TURN_MS = 1  # a timer, not a posted event: Qt 6 delivers 0 ms single shots in this pass


class _Turns:
    """Counts the UI thread's event-loop passes (``awake``) and the pass a piece last ran in."""

    def __init__(self) -> None:
        self.turn = 0
        self.taken = -1  # the turn the last piece ran in
        self._dispatcher: QAbstractEventDispatcher | None = None

    def now(self) -> int:
        dispatcher = QAbstractEventDispatcher.instance()
        if dispatcher is not None and dispatcher is not self._dispatcher:
            self._dispatcher = dispatcher
            dispatcher.awake.connect(self._awake)
        return self.turn

    def _awake(self) -> None:
        self.turn += 1


TURNS = _Turns()


def in_own_turn(owner: QObject, piece: Callable[[], object]) -> bool:
    """Runs ``piece`` now unless another piece ran in this pass or the one before; else at a
    later turn (a timer of ``owner``'s: dropped with it). True: it ran now."""
    return _in_own_turn(owner, piece, deferred_at=None)


def _in_own_turn(owner: QObject, piece: Callable[[], object], deferred_at: int | None) -> bool:
    turn = TURNS.now()
    if TURNS.taken >= turn - 1 and deferred_at != turn:  # == turn: no passes reported
        QTimer.singleShot(NEXT_TURN_MS, owner, lambda: _in_own_turn(owner, piece, turn))
        return False
    TURNS.taken = turn
    piece()
    return True
