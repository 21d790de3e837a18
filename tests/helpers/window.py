"""Driving the window in tests: run a turn and wait for its record."""

from __future__ import annotations

from collections.abc import Callable

from pytestqt.qtbot import QtBot

from inspector.app.shell.main_window import MainWindow
from inspector.core.records import RunRecord


def run_in_window(
    window: MainWindow,
    qtbot: QtBot,
    ref: str | None = None,
    *,
    start: Callable[[], object] | None = None,
    timeout_ms: int = 20_000,
) -> RunRecord:
    """Selects scenario ``ref`` (when given), starts a run (Run, unless ``start`` says how),
    waits for its record and for the runner to let go; a start that says False fails."""
    if ref is not None:
        assert window.library.select_scenario(ref)
    with qtbot.waitSignal(window.runner.finished, timeout=timeout_ms) as finished:
        assert (start or window.run_turn)() is not False
    qtbot.waitUntil(lambda: not window.runner.busy and window.pacer.pending == 0)
    record = finished.args[0]
    assert isinstance(record, RunRecord)
    return record
