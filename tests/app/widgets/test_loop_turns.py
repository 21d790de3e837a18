"""``in_own_turn``: pieces that Qt's timers would run back to back in one pass run in turns of
their own; a deferred piece waits one turn at most."""

from __future__ import annotations

from itertools import pairwise

import pytest
from PySide6.QtCore import QObject, QTimer
from pytestqt.qtbot import QtBot

from inspector.app.widgets.loop_turns import TURNS, in_own_turn


def test_pieces_due_in_one_pass_run_with_a_free_pass_between(qtbot: QtBot) -> None:
    owner = QObject()
    turns: list[int] = []
    for _ in range(3):  # all due in the same timer pass
        QTimer.singleShot(0, owner, lambda: in_own_turn(owner, lambda: turns.append(TURNS.now())))
    qtbot.waitUntil(lambda: len(turns) == 3)
    assert all(later - earlier >= 2 for earlier, later in pairwise(turns)), turns


def test_a_deferred_piece_runs_even_if_no_turn_is_reported(
    qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    owner = QObject()
    ran: list[str] = []
    assert in_own_turn(owner, lambda: ran.append("first"))
    assert not in_own_turn(owner, lambda: ran.append("second"))  # same pass: later
    assert ran == ["first"]
    monkeypatch.setattr(TURNS, "now", lambda: 7)  # a dispatcher that never says "awake"
    TURNS.taken = 7
    qtbot.waitUntil(lambda: ran == ["first", "second"])
