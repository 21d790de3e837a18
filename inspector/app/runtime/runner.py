"""The one bridge between the engine and Qt (STYLE.md habit 6).

``InspectorEventLoop`` is qasync's loop (asyncio on Qt's event loop) plus asyncio's
async-generator hooks, which qasync never installs (NOTES-QT: without them, leaving a provider's
stream early logs "async generator ignored GeneratorExit").

``TurnRunner`` runs one ``Turn`` at a time on that loop: the scenario, provider and turn are
built on a worker thread (an HTTP client's SSL set-up or a user's python file would otherwise
freeze the window), every engine event is recorded in the store and re-emitted as a Qt signal,
and Stop cancels the task, which the engine turns into a finished, recorded ``cancelled`` run.
A replay (``start_replay``) is the same machinery with another turn builder: the recording is
read and the live provider set up on the worker thread too.
Widgets connect to the signals; they never await.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import qasync
from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QApplication

from inspector.core.errors import InspectorError, last_line
from inspector.core.events import Event, EventSink, fan_out
from inspector.core.loop import Turn
from inspector.core.provider import close_provider
from inspector.store import Store
from inspector.workflows.turns import plan_turn, replay, settle

# Imported on first use by httpx's async transport (70–110 ms, NOTES-QT): done once, off-thread.
_WARM_UP_MODULES = ("anyio._backends._asyncio",)


class InspectorEventLoop(qasync.QEventLoop):  # type: ignore[misc]
    """qasync's event loop with asyncio's async-generator hooks installed while it runs."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._saved_asyncgen_hooks: Any = None
        super().__init__(*args, **kwargs)

    def _before_run_forever(self) -> None:
        super()._before_run_forever()
        self._saved_asyncgen_hooks = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook, finalizer=self._asyncgen_finalizer_hook
        )

    def _after_run_forever(self) -> None:
        self.restore_asyncgen_hooks()
        super()._after_run_forever()

    def restore_asyncgen_hooks(self) -> None:
        """Puts back the hooks found at start (a loop made ``already_running`` calls this when
        the application quits; tests call it at teardown)."""
        if self._saved_asyncgen_hooks is not None:
            sys.set_asyncgen_hooks(*self._saved_asyncgen_hooks)
            self._saved_asyncgen_hooks = None

    def detach(self) -> None:
        """Ends a loop made with ``already_running=True`` (tests) so that it can be closed.

        Not ``stop()``: qasync's stop calls ``QCoreApplication.exit()``, which leaves Qt's
        quit-now flag set when no ``exec()`` is running, and every later nested event loop
        (a dialog, a qtbot wait) then returns at once."""
        self._QEventLoop__is_running = False  # qasync's own flag (name-mangled private)
        self.restore_asyncgen_hooks()
        app = QApplication.instance()
        if app is not None:
            app.aboutToQuit.disconnect(self._after_run_forever)
        asyncio.events._set_running_loop(None)


def _prepare(ref: str, overrides: list[str], sink: EventSink) -> Turn:
    """Loads the scenario and builds its provider and turn (on a worker thread)."""
    return plan_turn(ref, overrides, set_up=True).turn(sink)


def _prepare_replay(
    path: Path, run_id: str, overrides: list[str], offline: bool, sink: EventSink
) -> Turn:
    """Reads run ``run_id`` (a ``Store`` of this worker thread's own) and builds its replay;
    online, the live provider is built and set up here too, before any request needs it."""
    with Store.open(path) as store:
        record = store.load(run_id)
    return replay(record, overrides, sink, offline=offline, set_up=True)


def _warm_up() -> None:
    for name in _WARM_UP_MODULES:
        if importlib.util.find_spec(name.split(".")[0]) is not None:
            importlib.import_module(name)


def error_line(exc: BaseException) -> str:
    """One readable line for the window: our own errors say it all; others get their type."""
    if isinstance(exc, InspectorError):
        return str(exc)
    return last_line(exc)


class TurnRunner(QObject):
    """Runs turns on the running asyncio loop (the ``InspectorEventLoop``), one at a time."""

    preparing = Signal(str)  # the scenario reference (or "replay of RUN_ID"): building the turn
    started = Signal(str)  # run_id: RunStarted was published and recorded
    # Every engine Event, in order, after the store recorded it. (Not "event": that name is
    # QObject.event, the virtual Qt dispatches every QEvent through.)
    engineEvent = Signal(object)
    finished = Signal(object)  # the final RunRecord (cancelled included)
    failed = Signal(str)  # the turn could not be built (bad scenario, provider set-up): one line
    busyChanged = Signal(bool)

    def __init__(
        self,
        store: Store,
        prepare: Callable[[str, list[str], EventSink], Turn] = _prepare,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._store = store
        self._prepare = prepare
        self._task: asyncio.Task[None] | None = None
        # The turn running, or the last one: a replay's provider says where its answers came from.
        self.turn: Turn | None = None
        self._busy = False  # until busyChanged(False) went out, not merely until the task ended

    @property
    def busy(self) -> bool:
        return self._busy

    def warm_up(self) -> None:
        """Pre-imports what the first HTTP request would import on the UI thread."""
        asyncio.get_event_loop().run_in_executor(None, _warm_up)

    def start(self, ref: str, overrides: list[str] | None = None) -> bool:
        """Starts a turn of scenario ``ref`` with ``--set`` style overrides; False while one
        is already running."""
        chosen = list(overrides or [])
        return self._launch(ref, lambda sink: self._prepare(ref, chosen, sink))

    def start_replay(self, run_id: str, overrides: list[str], offline: bool) -> bool:
        """Replays recorded run ``run_id`` (``replay_turn``) with ``overrides`` on top of its
        recorded scenario; ``offline`` stops at the first divergence instead of asking the
        scenario's provider. A run that is missing or still recording, or overrides that do
        not apply, end in ``failed``. False while a turn is already running."""
        path = self._store.path
        build = partial(_prepare_replay, path, run_id, list(overrides), offline)
        return self._launch(f"replay of {run_id}", build)

    def _launch(self, label: str, prepare: Callable[[EventSink], Turn]) -> bool:
        if self.busy:
            return False
        self._task = asyncio.get_event_loop().create_task(self._run(label, prepare))
        # A done callback, not a finally: a task cancelled before its first step runs no code.
        self._task.add_done_callback(self._idle)
        self._busy = True
        self.busyChanged.emit(True)
        return True

    def stop(self) -> None:
        """Cancels the running turn; it ends as a recorded ``cancelled`` run."""
        if self._task is not None and not self._task.done():
            self._task.cancel()

    async def _run(self, label: str, prepare: Callable[[EventSink], Turn]) -> None:
        self.preparing.emit(label)
        recorder = self._store.recorder()
        sink = fan_out(recorder, self._publish)
        loop = asyncio.get_running_loop()
        try:
            turn = await loop.run_in_executor(None, prepare, sink)
        except asyncio.CancelledError:
            self.failed.emit("stopped before the run started")
            return
        except Exception as exc:  # no traceback in a window: one line, in the window
            self.failed.emit(error_line(exc))
            return
        self.turn = turn
        try:
            record = await turn.run()  # cancellation ends inside as a cancelled record
            try:  # recording failed part-way: the finished run is stored now
                settle(self._store, recorder, record)
            except InspectorError as exc:
                self.failed.emit(error_line(exc))
            self.finished.emit(record)
        finally:
            await close_provider(turn.provider)

    def _idle(self, _task: asyncio.Task[None]) -> None:
        self._busy = False
        self.busyChanged.emit(False)

    def _publish(self, event: Event) -> None:
        if event.kind == "run_started":
            self.started.emit(event.run_id)
        self.engineEvent.emit(event)
