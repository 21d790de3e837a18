"""Application set-up and the three ways the window runs: interactive, ``--screenshot`` (render
to a PNG and exit) and ``--self-test`` (run the retry-feedback demo, check, exit)."""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QMessageLogContext, QTimer, QtMsgType, qInstallMessageHandler
from PySide6.QtWidgets import QApplication

from inspector.app.runtime.gui_collector import GuiThreadCollector
from inspector.app.runtime.runner import InspectorEventLoop
from inspector.app.shell.main_window import MainWindow
from inspector.app.shell.welcome import is_first_run
from inspector.app.widgets.icons import app_icon
from inspector.core.errors import ScenarioError
from inspector.core.records import RunRecord
from inspector.locations import window_state_file
from inspector.resources import DEMO_PREFIX, demo_path
from inspector.store import Store, resolve_db_path

WINDOW_SIZE = (1400, 900)
SELF_TEST_SCENARIO = "demo:retry-feedback"
HEADLESS_TIMEOUT_MS = 60_000
PRICE_WAIT_S = 10.0  # at most, for the shown run's cost and the runs list (``_settling``)
PRICE_POLL_MS = 20
EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
# Said by Qt's offscreen platform on every show(); not a problem of ours.
_HARMLESS_QT_MESSAGES = ("This plugin does not support propagateSizeHints()",)


def _qt_messages(kind: QtMsgType, _context: QMessageLogContext, message: str) -> None:
    if not message.startswith(_HARMLESS_QT_MESSAGES):
        print(f"qt: {message}", file=sys.stderr)


def application() -> QApplication:
    """The QApplication, created once with the project's name, icon and style."""
    existing = QApplication.instance()
    if isinstance(existing, QApplication):
        return existing
    qInstallMessageHandler(_qt_messages)
    app = QApplication(sys.argv[:1])
    app.setApplicationName("Agent Inspector")
    app.setOrganizationName("agent-inspector")
    app.setDesktopFileName("agent-inspector")
    app.setWindowIcon(app_icon())
    # Fusion draws the same everywhere and follows the system palette (light or dark).
    app.setStyle("Fusion")
    return app


def save_screenshot(window: MainWindow, path: str | Path) -> None:
    """Renders the window as it is now to a PNG."""
    QApplication.processEvents()
    if not window.grab().save(str(path), "PNG"):
        raise OSError(f"cannot write {path}")


class _Headless:
    """Drives the window without a user: run a scenario (or not), then call ``done``."""

    def __init__(self, window: MainWindow, done: Callable[[RunRecord | None, str], int]) -> None:
        self.window = window
        self.done = done
        self.code: int | None = None
        self.record: RunRecord | None = None
        self.problem = ""
        self.exit: Callable[[int], object] = QApplication.exit  # ends the app's event loop
        window.runner.finished.connect(self._finished)
        window.runner.failed.connect(self._failed)
        # The runner goes idle after its last signal: the window is complete by then.
        window.runner.busyChanged.connect(self._busy)
        QTimer.singleShot(HEADLESS_TIMEOUT_MS, lambda: self._end(None, "timed out"))
        self._price_deadline: float | None = None  # set at the first ``_end``

    def start(self, scenario: str | None) -> None:
        if scenario is None:
            QTimer.singleShot(0, lambda: self._end(None, ""))
        elif self.window.library.select_scenario(scenario):
            self.window.run_turn()
        else:
            QTimer.singleShot(0, lambda: self._end(None, _unknown(scenario)))

    def _finished(self, record: RunRecord) -> None:
        self.record = record

    def _failed(self, message: str) -> None:
        self.problem = message

    def _busy(self, busy: bool) -> None:
        if not busy:
            QTimer.singleShot(0, lambda: self._end(self.record, self.problem))

    def _end(self, record: RunRecord | None, problem: str) -> None:
        if self.code is not None:
            return
        # The run's last events and its end reach the views in slices (EventPacer): all of
        # them now, or the window is drawn half-way through the run.
        self.window.pacer.flush()
        QApplication.processEvents()  # let the views take the last events in
        if self._price_deadline is None:
            self._price_deadline = time.monotonic() + PRICE_WAIT_S
        if self._settling() and time.monotonic() < self._price_deadline:
            QTimer.singleShot(PRICE_POLL_MS, lambda: self._end(record, problem))
            return
        self.code = self.done(record, problem)
        self.exit(self.code)

    def _settling(self) -> bool:
        """Something the picture must show is still coming from a worker thread: the shown
        run's cost (the pricing thread: not "cost …"), or the store's runs (read on a worker
        at start-up, then listed a chunk per turn: not an empty runs list)."""
        listing = self.window.runs_listing.task
        return (
            self.window.timeline.outcome.pricing
            or (listing is not None and not listing.done())
            or self.window.library.runs.listing
        )


def _unknown(scenario: str) -> str:
    """Why ``scenario`` is not listed: a demo's line names the demos there are, as ``run``'s."""
    if scenario.startswith(DEMO_PREFIX):
        try:
            demo_path(scenario.removeprefix(DEMO_PREFIX))
        except ScenarioError as exc:
            return str(exc)
    return f"{scenario}: no such scenario"


def _screenshot_done(window: MainWindow, path: str) -> Callable[[RunRecord | None, str], int]:
    def done(record: RunRecord | None, problem: str) -> int:
        if record is not None:
            window.timeline.select_last()
        try:
            save_screenshot(window, path)
        except OSError as exc:
            print(f"agent-inspector: error: {exc}", file=sys.stderr)
            return EXIT_FAILED
        if problem:
            print(f"agent-inspector: error: {problem}", file=sys.stderr)
            return EXIT_BAD_INPUT
        return EXIT_OK

    return done


def _self_test_done(window: MainWindow) -> Callable[[RunRecord | None, str], int]:
    def done(record: RunRecord | None, problem: str) -> int:
        checks = {
            "the run finished": record is not None and not problem,
            "the run succeeded": record is not None and record.status == "succeeded",
            "the timeline shows every step": record is not None
            and window.live is not None
            and len(window.live.steps) == len(record.steps) > 0,
            "the run is listed": record is not None
            and window.library.runs.row_of(record.run_id) == 0,
            "the store has the record": record is not None
            and window.store.load(record.run_id).status == record.status,
            "no error shown": not window.message_bar.isVisible(),
        }
        failed = [name for name, ok in checks.items() if not ok]
        for name, ok in checks.items():
            print(f"self-test: {'ok  ' if ok else 'FAIL'} {name}")
        if problem:
            print(f"self-test: {problem}", file=sys.stderr)
        return EXIT_FAILED if failed else EXIT_OK

    return done


def run_gui(
    scenario: str | None,
    db: str | None,
    screenshot: str | None = None,
    self_test: bool = False,
    size: tuple[int, int] | None = None,
) -> int:
    """Opens the window (running ``scenario`` if given) and returns the exit code. ``size``
    (``--size``) wins over the size saved with the layout; ``--screenshot`` and ``--self-test``
    neither read nor write the saved layout (``window.ini``)."""
    app = application()
    loop = InspectorEventLoop(app)
    asyncio.set_event_loop(loop)
    collector = GuiThreadCollector()
    scratch = (
        tempfile.TemporaryDirectory(prefix="agent-inspector-") if self_test and not db else None
    )
    store_path = Path(scratch.name) / "self-test.sqlite3" if scratch else resolve_db_path(db)
    first_run = not self_test and is_first_run(store_path)  # before Store.open creates it
    store = Store.open(store_path)
    window = MainWindow(store, first_run=first_run)
    window.resize(*(size or WINDOW_SIZE))
    if screenshot is None and not self_test:
        window.window_layout.use_file(window_state_file())  # the layout of last time
        window.recent.use_file(window_state_file())
        if size is not None:
            window.resize(*size)
    headless: _Headless | None = None
    if screenshot is not None:
        headless = _Headless(window, _screenshot_done(window, screenshot))
    elif self_test:
        headless = _Headless(window, _self_test_done(window))
        scenario = SELF_TEST_SCENARIO
    window.show()
    window.runner.warm_up()
    if headless is not None:
        headless.start(scenario)
    elif scenario is not None and window.library.select_scenario(scenario):
        QTimer.singleShot(0, window.run_turn)
    if headless is None:
        window.local_model.refresh()  # a server started earlier becomes the local preset
    try:
        code = loop.run_forever()
    finally:
        _drain(loop)
        loop.close()
        asyncio.set_event_loop(None)
        store.close()
        collector.stop()
        if scratch is not None:
            scratch.cleanup()
    if headless is not None and headless.code is not None:
        return headless.code
    return int(code or 0)


def _drain(loop: InspectorEventLoop) -> None:
    """Cancels what is left (a run stopped by quitting) and lets it finish its record."""
    tasks = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in tasks:
        task.cancel()
    if tasks:
        loop.run_until_complete(asyncio.gather(*tasks, return_exceptions=True))
    loop.run_until_complete(loop.shutdown_asyncgens())
