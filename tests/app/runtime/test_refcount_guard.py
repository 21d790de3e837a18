"""The None guard: void Qt calls must not be able to exhaust None's references."""

from __future__ import annotations

import sys

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from inspector.app.runtime.refcount_guard import immortalize_none


def test_void_calls_cannot_use_up_none(qtbot: QtBot) -> None:
    immortalize_none()
    immortalize_none()  # idempotent: the ballast is added once
    widget = QWidget()
    qtbot.addWidget(widget)
    before = sys.getrefcount(None)
    for _ in range(10_000):
        widget.update()
    after = sys.getrefcount(None)
    assert after > 1 << 39
    assert before - after <= 10_000 + 100  # at most the defect's one reference per call


class _Emitter(QObject):
    fired = Signal(int)


def test_emits_cannot_use_up_the_bools() -> None:
    immortalize_none()
    emitter = _Emitter()
    for _ in range(10_000):  # unguarded, this aborts the interpreter ("bool_dealloc")
        emitter.fired.emit(1)
    assert sys.getrefcount(False) > 1 << 39 and sys.getrefcount(True) > 1 << 39
