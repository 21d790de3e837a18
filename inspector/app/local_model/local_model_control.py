"""Start, stop and ask about the local model (``inspector.localmodel``) from the window.

Those functions block (starting waits up to two minutes for the model to load), so each runs on
a worker thread of the asyncio loop; progress lines come back to the UI thread through
``call_soon_threadsafe`` and out as Qt signals. One job at a time. ``inspector.localmodel`` (and
httpx with it) is imported on the worker, keeping it off the window's start-up.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal

from inspector.app.runtime.runner import error_line

Progress = Callable[[str], None]


class Abandoned(Exception):
    """Raised on the worker by its progress callback once the window closes: a start stops
    waiting for the model (the server, detached, keeps loading; Status finds it later)."""


def _start(say: Progress) -> str:
    from inspector import localmodel

    return localmodel.start(progress=say).base_url


def _status(_say: Progress) -> tuple[str, str | None, int | None]:
    from inspector import localmodel

    current = localmodel.status()
    pid = current.server.pid if current.server else None
    return current.state, current.base_url, pid


def _stop(_say: Progress) -> tuple[str, int] | None:
    from inspector import localmodel

    stopped = localmodel.stop()
    return (stopped.base_url, stopped.pid) if stopped else None


def failure_message(exc: BaseException) -> str:
    """One line; "not installed" always names the command that installs it."""
    from inspector.localmodel import INSTALL_COMMAND, NotInstalled

    line = error_line(exc)
    if isinstance(exc, NotInstalled) and INSTALL_COMMAND not in line:
        line += f"; run `{INSTALL_COMMAND}`"
    return f"Local model: {line}"


class LocalModelControl(QObject):
    """Runs ``start``/``status``/``stop`` off the UI thread and reports through signals."""

    busyChanged = Signal(bool)
    progress = Signal(str)  # one line per stage while starting
    running = Signal(str)  # the base URL: started, or found running
    notRunning = Signal(str)  # what happened (stopped, or found stopped / starting)
    failed = Signal(str)  # one line; names `make local-model` when it is not installed

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._task: asyncio.Task[None] | None = None
        self._abandon = threading.Event()

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> bool:
        return self._launch(_start, self._started)

    def refresh(self) -> bool:
        """Asks whether a server is running (started here, from the CLI or another window)."""
        return self._launch(_status, self._status_known)

    def stop(self) -> bool:
        return self._launch(_stop, self._stopped)

    def abandon(self) -> None:
        """Lets a start in progress return at its next progress line (the window closes; the
        loop's executor would otherwise wait up to the start's two-minute timeout)."""
        self._abandon.set()

    def _launch(self, job: Callable[[Progress], Any], done: Callable[[Any], None]) -> bool:
        if self.busy:
            return False
        self._task = asyncio.get_event_loop().create_task(self._run(job, done))
        self._task.add_done_callback(lambda _task: self.busyChanged.emit(False))
        self.busyChanged.emit(True)
        return True

    async def _run(self, job: Callable[[Progress], Any], done: Callable[[Any], None]) -> None:
        loop = asyncio.get_running_loop()

        def say(line: str) -> None:  # called on the worker thread
            if self._abandon.is_set():
                raise Abandoned("the window closed")
            loop.call_soon_threadsafe(self.progress.emit, line)

        try:
            result = await loop.run_in_executor(None, job, say)
        except Abandoned:
            return
        except Exception as exc:  # a window shows one line, never a traceback
            self.failed.emit(failure_message(exc))
            return
        done(result)

    def _started(self, url: str) -> None:
        self.running.emit(url)

    def _status_known(self, result: tuple[str, str | None, int | None]) -> None:
        state, url, pid = result
        if state == "running" and url:
            self.running.emit(url)
        elif state == "starting":
            self.notRunning.emit(f"Local model: starting (pid {pid}), not answering yet")
        else:
            self.notRunning.emit("Local model: not running")

    def _stopped(self, result: tuple[str, int] | None) -> None:
        if result is None:
            self.notRunning.emit("Local model: none was running")
        else:
            self.notRunning.emit(
                f"Local model: stopped the server at {result[0]} (pid {result[1]})"
            )
