"""The status bar's token count: written at once, or (``soon``, a streaming run's steps) once
for many usages, the last one winning."""

from __future__ import annotations

from PySide6.QtWidgets import QMainWindow
from pytestqt.qtbot import QtBot

from inspector.app.shell.run_status import RunStatus, tokens_text
from inspector.core.records import Usage


def test_usages_soon_are_written_once_the_last_winning(qtbot: QtBot) -> None:
    window = QMainWindow()
    qtbot.addWidget(window)
    status = RunStatus(window.statusBar(), window)
    writes: list[str] = []
    status.tokens.setText = writes.append  # type: ignore[method-assign]
    for n in range(1, 1_001):
        status.show_usage(Usage(input_tokens=n, output_tokens=1), soon=True)
    assert writes == []  # no event-loop turn yet
    qtbot.waitUntil(lambda: writes != [])
    assert writes == [tokens_text(Usage(input_tokens=1_000, output_tokens=1))]
    status.show_usage(Usage(input_tokens=5))  # a record's usage: at once
    assert writes[-1] == tokens_text(Usage(input_tokens=5))
