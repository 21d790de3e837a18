"""A read for the views off the UI thread (a long run's records take seconds to read and fold),
of which only the last one asked for lands: one the user has since moved away from is dropped.

The read function opens its own ``Store`` (one per thread); while it runs, the status bar says
what is being read; whatever it raises is one line in the window's message bar, never a
traceback (and never a status message left showing)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Generic, TypeVar

from inspector.app.runtime.gui_collector import collection_held, settle_loaded
from inspector.app.runtime.notifier import Notifier
from inspector.app.runtime.runner import error_line

T = TypeVar("T")


class LatestRead(Generic[T]):
    def __init__(self, notify: Notifier) -> None:
        self._notify = notify
        self._asked = 0  # counts the reads asked for: only the last one lands
        self._pending = False
        self.task: asyncio.Task[None] | None = None  # the last one (kept: tasks are weak refs)

    def start(
        self, status: str, read: Callable[[], T], done: Callable[[T], None], failure: str
    ) -> None:
        """Runs ``read`` on a worker thread, then ``done`` with its value on this one, unless
        another read was started or ``drop`` called meanwhile. ``failure`` heads the message
        when it raises ("Cannot compare" → "Cannot compare: no run 'x' in …")."""
        self._asked += 1
        self._pending = True
        self._notify.show_status(status)
        self.task = asyncio.get_event_loop().create_task(
            self._run(self._asked, read, done, failure)
        )

    def drop(self) -> None:
        """Forgets the read under way: it will not land."""
        if self._pending:
            self._pending = False
            self._notify.clear_status()
        self._asked += 1

    async def _run(
        self, asked: int, read: Callable[[], T], done: Callable[[T], None], failure: str
    ) -> None:
        loop = asyncio.get_running_loop()
        try:
            with collection_held():  # what the read builds is frozen when it lands
                value = await loop.run_in_executor(None, read)
        except Exception as exc:  # no traceback in a window: one line, in the window
            if asked == self._asked:
                self._landed()
                self._notify.show_message("error", f"{failure}: {error_line(exc)}")
            return
        if asked == self._asked:
            self._landed()
            done(value)
            settle_loaded()

    def _landed(self) -> None:
        self._pending = False
        self._notify.clear_status()
