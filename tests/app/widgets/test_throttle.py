"""Throttle: the pokes before it fires are folded into one run of its slot."""

from __future__ import annotations

from PySide6.QtCore import QObject
from pytestqt.qtbot import QtBot

from inspector.app.widgets.throttle import Throttle


def test_pokes_before_it_fires_run_the_slot_once(qtbot: QtBot) -> None:
    runs: list[int] = []
    owner = QObject()
    throttle = Throttle(owner, 10, lambda: runs.append(1))
    assert throttle.isSingleShot() and throttle.interval() == 10
    with qtbot.waitSignal(throttle.timeout, timeout=5_000):
        for _ in range(3):
            throttle.poke()
    assert runs == [1] and not throttle.isActive()
    throttle.poke()
    throttle.stop()  # a pending run dropped
    assert runs == [1] and not throttle.isActive()
