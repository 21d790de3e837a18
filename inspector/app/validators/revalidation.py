"""Instant re-validation in the window, off the UI thread (the job itself is
``inspector.workflows.revalidate.revalidate_runs``).

``Revalidator``: a newer request supersedes an older one, which stops at its next run and whose
result is dropped. The job runs on a daemon thread, not the loop's executor: user code that hangs
on import must neither take a thread the window's store reads need nor hold up the app's exit.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QObject, Signal

from inspector.app.runtime.runner import error_line
from inspector.core.errors import InspectorError
from inspector.core.threads import in_daemon_thread
from inspector.workflows.revalidate import (
    Problem,
    RevalidationResult,
    python_files,
    revalidate_runs,
    syntax_problem,
)

__all__ = [
    "Problem",
    "RevalidationResult",
    "Revalidator",
    "python_files",
    "revalidate_runs",
    "syntax_problem",
]


class Revalidator(QObject):
    """Runs ``revalidate_runs`` off the UI thread; emits ``finished(RevalidationResult)`` or
    ``failed(one line)`` for the newest request only."""

    finished = Signal(object)  # RevalidationResult
    failed = Signal(str)

    def __init__(self, db: Path, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._db = db
        self._request = 0
        self._task: asyncio.Task[None] | None = None

    @property
    def busy(self) -> bool:
        return self._task is not None and not self._task.done()

    def revalidate(self, ref: str, run_ids: list[str], *, every_run: bool = False) -> None:
        """``run_ids`` re-judged by scenario ``ref``'s validators (``every_run``: all of the
        scenario's recorded runs instead)."""
        self._request += 1
        request = self._request
        job = functools.partial(
            revalidate_runs,
            self._db,
            ref,
            list(run_ids),
            every_run=every_run,
            cancelled=lambda: request != self._request,
        )
        self._task = asyncio.get_event_loop().create_task(self._run(request, job))

    def cancel(self) -> None:
        """Forgets the request in flight: it stops at its next run; its result is dropped."""
        self._request += 1

    async def _run(self, request: int, job: Callable[[], RevalidationResult]) -> None:
        try:
            result: RevalidationResult = await in_daemon_thread(job)
        except (InspectorError, OSError) as exc:
            if request == self._request:
                self.failed.emit(f"Cannot re-validate: {exc}")
            return
        except Exception as exc:  # a bug of ours, say: one line, never "Re-validating…" forever
            if request == self._request:
                self.failed.emit(f"Cannot re-validate: {error_line(exc)}")
            return
        if request == self._request:
            self.finished.emit(result)
