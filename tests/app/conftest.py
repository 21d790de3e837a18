"""Qt test fixtures (NOTES-QT pattern (a)): sync tests, a qasync loop made ``already_running``
on pytest-qt's QApplication and driven by qtbot's waits; each test gets its own store.

Tests fail on Qt warnings (``qt_log_level_fail`` in pyproject)."""

from __future__ import annotations

import asyncio
import gc
import math
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from inspector.app.runtime.gui_collector import GuiThreadCollector
from inspector.app.runtime.runner import InspectorEventLoop, TurnRunner
from inspector.app.shell.main_window import MainWindow
from inspector.store import Store

WINDOW_SIZE = (1400, 900)


@pytest.fixture(autouse=True)
def quitting_discards_edits(monkeypatch: pytest.MonkeyPatch) -> None:
    """A modal question would hang a headless test: a window a test closes discards its unsaved
    edits unless the test sets ``window.ask_discard`` itself
    (tests/app/shell/test_unsaved_edits.py)."""
    monkeypatch.setattr(
        "inspector.app.shell.main_window.ask_discard", lambda _parent, _unsaved: True
    )


@pytest.fixture
def qloop(qapp: QApplication, qtbot: QtBot) -> Iterator[InspectorEventLoop]:
    # As in the app: Qt objects are freed by garbage collection on this thread only, never on a
    # worker thread (which Qt answers with a warning, failing the test, or a crash).
    gc.collect()
    collector = GuiThreadCollector()
    loop = InspectorEventLoop(qapp, already_running=True)
    asyncio.set_event_loop(loop)
    yield loop
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    qtbot.waitUntil(lambda: all(t.done() for t in tasks), timeout=10_000)
    closing = asyncio.ensure_future(loop.shutdown_asyncgens(), loop=loop)
    qtbot.waitUntil(closing.done, timeout=10_000)
    loop.detach()
    loop.close()
    asyncio.set_event_loop(None)
    collector.stop()
    gc.unfreeze()  # what a window froze (settle_loaded) is the next test's garbage
    gc.collect()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    # Nothing a test does may reach the user's own store.
    monkeypatch.setenv("AGENT_INSPECTOR_DB", str(tmp_path / "default.sqlite3"))
    with Store.open(tmp_path / "runs.sqlite3") as opened:
        yield opened


@pytest.fixture
def runner(qloop: InspectorEventLoop, store: Store) -> TurnRunner:
    return TurnRunner(store)


@pytest.fixture
def window(qloop: InspectorEventLoop, store: Store, qtbot: QtBot) -> Iterator[MainWindow]:
    win = MainWindow(store)
    # Engine events reach the views as they come (tests look right after runner.finished);
    # the slices are tested in tests/app/runtime/test_event_pacer.py and test_paced_run.py.
    win.pacer.slice_s = win.pacer.slice_max_s = math.inf
    qtbot.addWidget(win)
    win.resize(*WINDOW_SIZE)
    win.show()
    qtbot.waitExposed(win)
    yield win
    if win.runner.busy:
        with qtbot.waitSignal(win.runner.busyChanged, timeout=10_000):
            win.runner.stop()
